"""The one compensation of a sync whose lease ran out under a slow Telegram while another
process synced the place (tgcheat.bot.delivery.sync): what it posted meanwhile goes, unless the
place's record holds it, and the place's next sync checks every message again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from telegram.error import TelegramError

from tgcheat.bot.delivery.plan import Chat
from tgcheat.bot.delivery.shown_codec import decode_shown
from tgcheat.bot.sender import ChatFlooded, Sender
from tgcheat.store.shown import ShownRecords
from tgcheat.table.place import Place

log = logging.getLogger(__name__)

#: Tries to delete a message posted under a lost lease while its chat is in flood waits.
TAKE_BACK_TRIES = 5


class LostLease:
    def __init__(self, shown: ShownRecords, sender: Sender, clock: Callable[[], int]) -> None:
        self.shown = shown
        self.sender = sender
        self.clock = clock
        #: Deletions of messages posted under a lost lease, waiting for a flood wait to end.
        self.deleting_later: set[asyncio.Task[None]] = set()

    async def take_back(self, place: Place, posted: list[tuple[Chat, int]]) -> None:
        """The lease ran out under a slow Telegram and another process synced the place: what
        this one posted meanwhile goes, but for what the place's record holds (a checkpoint
        may have kept a message without this sync learning so: its answer lost, or the round
        over while it was on its way; the next holder shows the place from that message);
        what it edited may have landed after the other's edits, so the place's next sync
        checks every message again (the one compensation)."""
        try:
            await self.shown.recheck(place, self.clock())
        except Exception as error:
            log.warning("chat %s: a check of its messages not asked for (%s)", place, error)
        posted = await self._not_recorded(place, posted)
        for chat, message_id in posted:
            try:
                # Never refused by the bot's budget: the message may carry a slot's buttons.
                await self.sender.delete(chat, message_id)
            except ChatFlooded as flooded:
                task = asyncio.create_task(
                    self._delete_after_the_wait(chat, message_id, flooded.until_ms)
                )
                self.deleting_later.add(task)
                task.add_done_callback(self.deleting_later.discard)
            except TelegramError as error:
                log.info("message %s in %s posted under a lost lease: %s", message_id, chat, error)

    async def _not_recorded(
        self, place: Place, posted: list[tuple[Chat, int]]
    ) -> list[tuple[Chat, int]]:
        """The messages of ``posted`` that the place's record does not hold (all of them,
        should Redis not answer: a message nobody knows of would keep its buttons)."""
        if not posted:
            return posted
        try:
            shown = decode_shown(await self.shown.read(place))
        except Exception as error:
            log.warning("chat %s: its record not read (%s); all it posted goes", place, error)
            return posted
        recorded = {(slot.chat, slot.message_id) for slot in shown.slots.values()}
        recorded |= {(line.chat, line.message_id) for line in shown.turned}
        return [message for message in posted if message not in recorded]

    async def _delete_after_the_wait(self, chat: Chat, message_id: int, until_ms: int) -> None:
        """A message posted under a lost lease, deleted once the chat's flood wait is over
        (nothing else knows of it: left, it would keep a slot's buttons)."""
        for _ in range(TAKE_BACK_TRIES):
            await asyncio.sleep(max(0, until_ms - self.clock()) / 1000)
            try:
                await self.sender.delete(chat, message_id)
                return
            except ChatFlooded as flooded:
                until_ms = flooded.until_ms
            except TelegramError as error:
                log.info("message %s in %s posted under a lost lease: %s", message_id, chat, error)
                return
        log.warning("message %s in %s posted under a lost lease was not deleted", message_id, chat)
