"""The delivery's lag, for the metrics: how long what players must see to act waited, from the
game's change (``Session.changed_ms``) to the sync round that sends it."""

from __future__ import annotations

from collections.abc import Sequence

from tgcheat.bot.delivery.plan import Step
from tgcheat.metrics import DELIVERY_LAG
from tgcheat.store.send_budget import Priority
from tgcheat.table.session import Session


def observe_lag(session: Session | None, going: Sequence[Step], now_ms: int) -> None:
    """A sync round sends ``going`` at ``now_ms``: when any of it is what a player must see
    (a turn's hand, a reveal, the table posted anew, an answer to their own tap), the time
    since the session changed is one observation."""
    if session is None or not session.changed_ms:
        return
    if any(step.priority <= Priority.MUST for step in going):
        DELIVERY_LAG.observe(max(0, now_ms - session.changed_ms) / 1000)
