"""A hub webhook's immediate poll (what `hubwatch run` does on POST /webhooks/hub) runs the derivatives
pass too: a base's webhook checks its derivatives, a derivative's checks itself."""

from __future__ import annotations

from derivatives_scenario import BASE, FIXED, STALE, Scenario, scenario  # noqa: F401  (the fixture)

from hubwatch.advisories.advise_match import is_fixed
from hubwatch.advisories.inherit import is_inherited
from hubwatch.tracker.derivatives import poll_now_with_derivatives
from hubwatch.tracker.poller import NewRevisions
from hubwatch.tracker.scheduler import PollCycle


def test_a_webhook_poll_checks_the_family(scenario: Scenario) -> None:
    cycle = PollCycle(hub=scenario.hub, store=scenario.store, settings=scenario.settings, worker_id="hook")
    try:
        scenario.sim.advance(str(BASE))
        outcome = poll_now_with_derivatives(cycle.poll_now, scenario.store, scenario.settings, BASE)
        assert isinstance(outcome, NewRevisions) and outcome.repo == BASE
        (inherited,) = [r for r in scenario.store.advisories.records(STALE) if is_inherited(r.osv)]  # no cycle ran
        assert not is_fixed(inherited.osv)
        assert not [r for r in scenario.store.advisories.records(FIXED) if is_inherited(r.osv)]

        scenario.sim.advance(str(STALE))  # the derivative takes the fix; its webhook closes the record
        poll_now_with_derivatives(cycle.poll_now, scenario.store, scenario.settings, STALE)
        (closed,) = [r for r in scenario.store.advisories.records(STALE) if is_inherited(r.osv)]
        assert closed.id == inherited.id and is_fixed(closed.osv)
    finally:
        cycle.close()
