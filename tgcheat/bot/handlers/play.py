"""A game in play: picking and playing cards, Cheat!, I believe you, passing and its vote;
/leave and /stop during a game."""

from __future__ import annotations

from tgcheat.bot import views
from tgcheat.bot.callbacks import ClaimPress, HandPress, Op, TurnPress
from tgcheat.bot.handlers.shell import TAP_NOT_SHOWN, Answer, Command, Events, Shell
from tgcheat.bot.taps import Tap
from tgcheat.i18n import N_, translator
from tgcheat.store.games import Committed
from tgcheat.table import transitions as table
from tgcheat.table.commands import (
    Believe,
    CallCheat,
    GameCommand,
    PassTurn,
    PlayCards,
    VoteOnPass,
)
from tgcheat.table.place import Place
from tgcheat.table.refusals import SessionRefusal, SessionRefused
from tgcheat.table.session import Session
from tgcheat.table.transitions import Actor


class PlayHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def act(
        self,
        place: Place,
        game_id: str | None,
        command: GameCommand,
        *,
        update_id: int | None,
        tap: Tap | None = None,
        answer: str | None = None,
    ) -> None:
        """A player's action on the game; a press is answered (with ``answer`` once it is
        done, in the player's language in the game). The Mini App's actions come this way too
        (no update: ``update_id`` None)."""
        shell = self.shell
        now = shell.clock()
        committed = await shell.store.transact(
            place,
            lambda session: table.act(session, game_id=game_id, command=command, now_ms=now),
            update_id=update_id,
            lease=True,
        )
        if tap is not None:
            text = None
            if answer and committed.changed and committed.session is not None:
                text = translator(committed.session.language_of(tap.user_id))._(answer)
            await shell.sender.answer(tap.query_id, text)
        await shell.show(place, committed, answering=tap.user_id if tap is not None else None)

    # --- buttons -------------------------------------------------------------------------------

    async def answer_claim(self, tap: Tap, press: ClaimPress) -> None:
        place, game_id, user_id = press.place, press.game_id, tap.user_id
        if press.op is Op.CHALLENGE:
            cheat = CallCheat(user_id, press.claim, self.shell.clock())
            await self.act(place, game_id, cheat, update_id=tap.update_id, tap=tap)
            return
        await self.act(
            place,
            game_id,
            Believe(user_id, press.claim),
            update_id=tap.update_id,
            tap=tap,
            answer=N_("You believe it."),
        )

    async def turn(self, tap: Tap, press: TurnPress) -> None:
        place, game_id, user_id = press.place, press.game_id, tap.user_id
        if press.op is Op.PASS:
            passing = PassTurn(user_id, press.plays)
            await self.act(place, game_id, passing, update_id=tap.update_id, tap=tap)
            return
        await self.act(
            place,
            game_id,
            VoteOnPass(user_id, press.plays, press.yes),
            update_id=tap.update_id,
            tap=tap,
            answer=N_("Your vote is in."),
        )

    async def play(self, tap: Tap, press: HandPress) -> None:
        if press.rank is None:
            raise SessionRefused(SessionRefusal.STALE)
        command = PlayCards(tap.user_id, press.plays, press.selected(), press.rank)
        await self.act(press.place, press.game_id, command, update_id=tap.update_id, tap=tap)

    async def pick(self, tap: Tap, press: HandPress) -> None:
        """A card picked (or the picks cleared): kept in the session, so that the player's hand
        shows it whatever else is synced meanwhile."""
        if tap.chat_id is None or tap.message_id is None or tap.chat_id != tap.user_id:
            # A hand is only ever drawn in its owner's private chat (forged data elsewhere).
            raise SessionRefused(SessionRefusal.STALE)
        shell = self.shell

        def change(stored: Session | None) -> tuple[Session | None, None]:
            session, game, _, selected = table.pick(
                stored,
                game_id=press.game_id,
                user_id=tap.user_id,
                plays=press.plays,
                selected=press.selected(),
                rank=press.rank if press.op is Op.PICK else None,
            )
            # More cards than a button carries are refused here, before anything is stored.
            views.check_selection_fits(session, game, selected)
            return session, None

        committed = await shell.store.transact(
            press.place, change, update_id=tap.update_id, lease=True
        )
        await shell.sender.answer(tap.query_id)
        held = await shell.show(press.place, committed, answering=tap.user_id, only_hand=True)
        if tap.user_id in held:
            # The pick is kept, and shown once the wait is over; the person hears why their
            # hand did not change.
            tr = translator(
                committed.session.language_of(tap.user_id) if committed.session else None
            )
            await shell.sender.answer(tap.query_id, tr._(TAP_NOT_SHOWN))

    # --- commands ------------------------------------------------------------------------------

    async def leave(self, command: Command) -> None:
        """/leave: out of the lobby, or out of the game (the hand set aside)."""
        if not command.in_group:
            raise Answer(N_("Send /leave in the group of the game."))
        shell = self.shell
        now = shell.clock()
        committed = await shell.store.transact(
            command.place,
            lambda session: table.leave_table(session, command.user_id, now),
            update_id=command.update_id,
            lease=True,
        )
        await shell.show(command.place, committed)

    async def stop(self, command: Command) -> None:
        """/stop: the lobby closes, or the game ends (its creator or an admin)."""
        if not command.in_group:
            raise Answer(N_("Send /stop in the group of the game."))
        shell = self.shell
        chat_id, now = command.chat_id, shell.clock()

        async def attempt(actor: Actor) -> Committed[Events]:
            return await shell.store.transact(
                command.place,
                lambda session: table.stop(session, actor=actor, now_ms=now),
                update_id=command.update_id,
                lease=True,
            )

        committed = await shell.as_actor(chat_id, command.user_id, attempt)
        await shell.show(command.place, committed)
