"""/settings and its menu (the group's rules for its next games), and /rules."""

from __future__ import annotations

from tgcheat.bot import views
from tgcheat.bot.callbacks import (
    OptionMenu,
    PresetChoice,
    SettingsMenu,
    SettingsPress,
    ValueChoice,
)
from tgcheat.bot.handlers.shell import Command, Shell
from tgcheat.bot.settings_texts import RULES_PROBLEMS
from tgcheat.bot.taps import Tap
from tgcheat.engine.rules import InvalidRules, Rules
from tgcheat.i18n import translator
from tgcheat.table import transitions as table
from tgcheat.table.place import Place
from tgcheat.table.refusals import SessionRefusal, SessionRefused
from tgcheat.table.settings import option_number, with_option_value, with_preset_number
from tgcheat.table.transitions import Actor


class SettingsHandlers:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell

    async def _check_manager(self, chat_id: int, user_id: int) -> None:
        if chat_id > 0:
            # A private chat's rules (its games against the computer) are its person's own.
            if chat_id != user_id:
                raise SessionRefused(SessionRefusal.NOT_ALLOWED)
            return
        session, _ = await self.shell.store.load(chat_id)

        async def attempt(actor: Actor) -> None:
            table.require_settings_manager(session, actor)

        await self.shell.as_actor(chat_id, user_id, attempt)

    async def settings(self, command: Command) -> None:
        """The rules of a group's next games; in private, of one's games against the
        computer (/play)."""
        chat_id = command.chat_id
        await self._check_manager(chat_id, command.user_id)
        rules = await self.shell.store.settings.group_rules(chat_id) or Rules()
        tr = await self.shell.group_language(chat_id, command.asker.language_code)
        await self.shell.tell(command.asker, views.settings_view(tr, chat_id, rules))

    async def rules(self, command: Command) -> None:
        shell = self.shell
        if not command.in_group:
            tr = await shell.language_of(command.asker)
            saved = await shell.store.settings.group_rules(command.chat_id)
            await shell.tell(command.asker, views.rules_view(tr, saved or Rules()))
            return
        session, _ = await shell.store.load(command.place)
        if session is not None and session.in_progress:
            rules = session.rules
        else:
            rules = await shell.store.settings.group_rules(command.chat_id) or Rules()
        tr = await shell.group_language(command.chat_id, command.asker.language_code)
        await shell.tell(command.asker, views.rules_view(tr, rules))

    async def press(self, tap: Tap, press: SettingsPress) -> None:
        shell = self.shell
        chat_id = press.chat_id
        menu = shell.menu_message(tap, chat_id)
        await self._check_manager(chat_id, tap.user_id)
        tr = translator(tap.language_code)
        rules = await shell.store.settings.group_rules(chat_id) or Rules()
        group_tr = await shell.group_language(chat_id, tr.language)
        match press.target:
            case SettingsMenu():
                view = views.settings_view(group_tr, chat_id, rules)
                await shell.sender.answer(tap.query_id)
            case OptionMenu(option):
                view = views.option_view(group_tr, chat_id, rules, option_number(option))
                await shell.sender.answer(tap.query_id)
            case PresetChoice() | ValueChoice():
                try:
                    rules = _chosen(rules, press.target)
                except InvalidRules as invalid:
                    # Refused when chosen, with the reason, never at play time (RULES.md).
                    await shell.sender.answer(tap.query_id, tr._(RULES_PROBLEMS[invalid.reason]))
                    return
                await shell.store.settings.save_group_rules(chat_id, rules)
                await self._adopt_in_open_lobby(chat_id, rules)
                await shell.sender.answer(tap.query_id, tr._("Saved for the next games."))
                view = views.settings_view(group_tr, chat_id, rules)
        await shell.sender.edit(chat_id, menu, view)

    async def _adopt_in_open_lobby(self, chat_id: int, rules: Rules) -> None:
        """An open lobby is the group's next game: it takes the new rules too."""
        now = self.shell.clock()
        committed = await self.shell.store.transact(
            chat_id,
            lambda session: (table.adopt_rules(session, rules, now_ms=now), None),
            lease=True,
        )
        if committed.changed:
            await self.shell.show(Place(chat_id), committed)


def _chosen(rules: Rules, target: PresetChoice | ValueChoice) -> Rules:
    if isinstance(target, PresetChoice):
        return with_preset_number(rules, target.preset)
    return with_option_value(rules, target.option, target.value)
