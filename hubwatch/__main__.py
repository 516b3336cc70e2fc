"""`python -m hubwatch` runs the CLI."""

from hubwatch.cli import main

main()
