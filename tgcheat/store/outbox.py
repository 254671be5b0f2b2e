"""What players must see of a change — the reveals and passes, the result, a removal — kept
with the change until it was shown (tgcheat.store.scripts.OUTBOX).

The compare-and-set that commits a change records its ``MustShow`` in the group's budget hash,
leased for a while to the process that commits it; that process settles it when Telegram has
confirmed every message (``GroupBudget.settle``), or hands what was not shown to the clock.
When the process dies or fails between the commit and Telegram's answer, the lease runs out and
whichever process's clock comes next shows it (``GroupBudget.release``).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson


@dataclass(frozen=True, slots=True)
class MustShow:
    """Messages a change owes the players."""

    #: Group messages of their own, in order (reveals, passes), as sent.
    lines: tuple[str, ...] = ()
    #: The table is posted anew below them (a notification; at the end, the result).
    table: bool = False
    #: Players whose hand comes back as a new message (a notification).
    hands: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.lines and not self.table and not self.hands

    def entry(self) -> bytes:
        """The entry's JSON as the scripts keep it (ids as strings: Lua's numbers are
        doubles)."""
        return orjson.dumps(
            {
                "lines": list(self.lines),
                "table": int(self.table),
                "hands": [str(user_id) for user_id in self.hands],
            }
        )
