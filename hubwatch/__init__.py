"""hubwatch: watch Hugging Face model repos and publish what changed as OSV advisories and feeds."""

__version__ = "0.1.0"
__all__ = ["__version__"]
