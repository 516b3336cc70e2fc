"""Hub emulator: an HTTP server speaking the part of the Hugging Face hub API huggingface_hub uses.

It serves repo histories from a folder (`ROOT/<org>__<name>/v1/…`; dataset repos from
`ROOT/datasets/<org>__<name>/v1/…`, at the hub's `/api/datasets/…` and `/datasets/…/resolve/…`
routes, with a parquet conversion branch from `PARQUET/vN/`; the state and `/_sim/datasets/…`
name them `datasets/<org>/<name>`), reveals new commits on
demand (`HubSim.advance`, `POST /_sim/{org}/{name}/advance`), force-pushes (`HubSim.rewind`,
`POST /_sim/{org}/{name}/rewind {"to": "vK"}`; `HubSim.squash`, `POST /_sim/{org}/{name}/squash`:
`super_squash_history`), renames repos and injects faults. See
`hubwatch hubsim --help` and the module docstrings of `app`, `api`, `files` and `faults`.
"""

from __future__ import annotations

from hubwatch.hubsim.faults import FaultConfig
from hubwatch.hubsim.repos import HistoryError, load_root
from hubwatch.hubsim.runner import HubSim, demo_root
from hubwatch.hubsim.state import SimError

__all__ = ["FaultConfig", "HistoryError", "HubSim", "SimError", "demo_root", "load_root"]
