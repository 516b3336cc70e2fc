"""`ds`, the web app over the seeded store with the reviews dataset and a hostile one, for the dataset
pages' tests: a test module imports it (`from dataset_app import ds  # noqa: F401  (the fixture)`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from feeds_seed import make_settings, seed
from reviews_seed import seed_hostile_dataset, seed_reviews

from hubwatch.feeds import create_app
from hubwatch.storage import Store


@pytest.fixture
def ds(store: Store) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """The feeds' seed store, the reviews dataset's recorded history and a hostile dataset, served
    by the app: the client and the reviews' shas by version."""
    seed(store)
    shas = seed_reviews(store)
    seed_hostile_dataset(store)
    with TestClient(create_app(make_settings(), store)) as client:
        yield client, shas
