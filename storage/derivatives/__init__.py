"""Base models and their derivatives."""
