"""People and the bot coming and going: a player who leaves the group, /kick, the bot removed
from a group, a group that becomes a supergroup."""

from __future__ import annotations

from telegram import ChatMember, Update
from telegram.ext import ContextTypes

from tgcheat.bot.handlers.shell import GROUP_TYPES, Answer, Command, Events, Shell, new_game_id
from tgcheat.i18n import N_
from tgcheat.store.games import Committed
from tgcheat.table import transitions as table
from tgcheat.table.place import Place
from tgcheat.table.transitions import Actor


class MembershipHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def member_left(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A player who leaves the group leaves its game (RULES.md "Leaving")."""
        message, chat = update.effective_message, update.effective_chat
        if message is None or chat is None or message.left_chat_member is None:
            return
        gone = message.left_chat_member.id
        if gone == self.shell.sender.bot.id:
            await self._bot_removed(chat.id)
            return
        now = self.shell.clock()
        for place in await self._places_of(chat.id, forum=bool(chat.is_forum)):
            committed = await self.shell.store.transact(
                place,
                lambda session: table.remove(session, gone, now),
                update_id=update.update_id,
                lease=True,
            )
            await self._show_removal(place, committed)

    async def _places_of(self, chat_id: int, *, forum: bool) -> list[Place]:
        """Where a group's games are: the chat, and in a forum each topic with a session."""
        topics = await self.shell.store.topics_of(chat_id) if forum else []
        return [Place(chat_id), *topics]

    async def topic_closed(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A forum topic closed: its game ends (``Shell.end_topic``); reopened, the topic
        needs nothing."""
        message = update.effective_message
        if message is None or message.message_thread_id is None:
            return
        await self.shell.end_topic(Place(message.chat.id, message.message_thread_id))

    async def kick(self, command: Command) -> None:
        """/kick as a reply to the player's message, or /kick <n>: their seat on the table, or
        before the deal their number in the lobby's list (``table.kick`` says who may)."""
        if not command.in_group:
            raise Answer(N_("Send /kick in the group of the game."))
        shell = self.shell
        now = shell.clock()
        seat_number = command.args[0] if command.args else ""

        async def attempt(actor: Actor) -> Committed[Events]:
            return await shell.store.transact(
                command.place,
                lambda session: table.kick(
                    session,
                    target=command.replied_user,
                    seat_number=seat_number,
                    actor=actor,
                    now_ms=now,
                ),
                update_id=command.update_id,
                lease=True,
            )

        committed = await shell.as_actor(command.chat_id, command.user_id, attempt)
        await self._show_removal(command.place, committed)

    async def _show_removal(self, place: Place, committed: Committed[Events]) -> None:
        if committed.changed or committed.duplicate:
            await self.shell.show(place, committed)

    async def bot_membership(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The bot removed from a group: that game ends and nothing of it is kept."""
        change = update.my_chat_member
        if change is None or change.chat.type not in GROUP_TYPES:
            return
        if change.new_chat_member.status in (ChatMember.LEFT, ChatMember.BANNED):
            await self._bot_removed(change.chat.id)

    async def _bot_removed(self, chat_id: int) -> None:
        shell = self.shell
        # The group cannot be written to any more; the players learn it in private.
        for place in [Place(chat_id), *await shell.store.topics_of(chat_id)]:
            await shell.end_game_at(place)
        await shell.store.forget_chat(chat_id)

    async def migrated(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A group that becomes a supergroup gets a new chat id: its game moves with it."""
        message = update.effective_message
        if message is None or message.migrate_to_chat_id is None:
            return
        shell = self.shell
        old_id, new_id = message.chat.id, message.migrate_to_chat_id
        session, _ = await shell.store.load(old_id)
        if session is None or not session.in_progress:
            return
        moved = table.migrated(session, new_chat_id=new_id, new_game_id=new_game_id())
        committed = await shell.store.transact(
            new_id,
            lambda current: (table.arrive(current, moved), None),
            update_id=update.update_id,
            lease=True,
        )
        await shell.store.forget_chat(old_id)
        if not committed.changed or committed.session is None:
            return
        # Buttons name the chat and the game: everything is shown anew under the new id (the
        # new chat's place has nothing shown yet, and the hands are of a new game id).
        await shell.show(Place(new_id), committed)
