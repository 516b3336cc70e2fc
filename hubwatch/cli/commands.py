"""Imports every command module so each registers its commands on the `hubwatch` group."""

# One line per command module; each module does `@cli.command()` / `cli.add_command(...)`.
from hubwatch.cli import watch  # noqa: F401
from hubwatch.cli import poll  # noqa: F401
from hubwatch.cli import run  # noqa: F401
from hubwatch.cli import hubsim  # noqa: F401
from hubwatch.cli import advisories  # noqa: F401
from hubwatch.cli import check  # noqa: F401
from hubwatch.cli import estimate  # noqa: F401
from hubwatch.cli import settings_cmd  # noqa: F401
from hubwatch.cli import notify  # noqa: F401
