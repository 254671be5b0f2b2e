"""Languages chosen with /language, and the command menu in every language."""

from __future__ import annotations

from redis.asyncio import Redis
from telegram import Bot

from tests.bot.conftest import GROUP_ID, TOKEN, BotHarness, make_harness
from tests.support.fake_telegram import FakeTelegram
from tests.support.updates import User, private
from tgcheat.bot.app import GROUP_COMMANDS, PRIVATE_COMMANDS, register_commands
from tgcheat.i18n import available_languages, telegram_code, translator

ADMIN, PLAYER = User(71, "Ann", language_code="en"), User(72, "Pau", language_code="es")


async def test_the_command_menu_is_set_per_language_for_groups_and_private_chats() -> None:
    fake = FakeTelegram()
    bot = Bot(TOKEN, request=fake, get_updates_request=fake)
    await bot.initialize()
    await register_commands(bot)
    calls = fake.calls_to("setMyCommands")
    languages = {str(c.params.get("language_code", "")) for c in calls}
    # Telegram takes two letters: Brazilian Portuguese's menu is "pt" (pt-br and pt users).
    assert languages == {"", *(telegram_code(lang) for lang in available_languages())}
    assert {"pt", "uk", "pl", "tr", "id", "ar"} <= languages and "pt_BR" not in languages
    assert len(calls) == 2 * len(languages)
    menus = {
        (str(c.params.get("language_code", "")), c.params["scope"]["type"]): {
            command["command"]: command["description"] for command in c.params["commands"]
        }
        for c in calls
    }
    for code, lang in (("pt", "pt_BR"), ("ar", "ar"), ("uk", "uk")):
        for scope in ("all_group_chats", "all_private_chats"):
            wanted = translator(lang)._("How to play")
            assert menus[code, scope]["help"] == wanted != "How to play"
    german_group = next(
        c
        for c in calls
        if c.params.get("language_code") == "de" and c.params["scope"]["type"] == "all_group_chats"
    )
    names = [command["command"] for command in german_group.params["commands"]]
    assert names == [name for name, _ in GROUP_COMMANDS]
    descriptions = {c["command"]: c["description"] for c in german_group.params["commands"]}
    english = {
        c["command"]: c["description"]
        for c in next(
            c
            for c in calls
            if not c.params.get("language_code") and c.params["scope"]["type"] == "all_group_chats"
        ).params["commands"]
    }
    assert descriptions["new"] != english["new"]
    private_names = {
        command["command"]
        for c in calls
        if c.params["scope"]["type"] == "all_private_chats"
        for command in c.params["commands"]
    }
    assert private_names == {name for name, _ in PRIVATE_COMMANDS}
    await bot.shutdown()
    fake.assert_clean()


async def test_an_admin_sets_the_group_language_and_the_table_follows(bot: BotHarness) -> None:
    bot.fake.set_admins(GROUP_ID, {ADMIN.id})
    await bot.command(ADMIN, "/new")
    lobby = bot.fake.last_message(GROUP_ID)
    await bot.command(PLAYER, "/language")
    # Pau's own language (Spanish) tells him he may not.
    refusal = translator("es")._("Only a group admin can change its language.")
    assert refusal != "Only a group admin can change its language."
    assert bot.fake.last_message(GROUP_ID).plain_text == refusal
    await bot.command(ADMIN, "/language")
    await bot.press(ADMIN, GROUP_ID, "Français")
    assert await bot.store.settings.group_language(GROUP_ID) == "fr"
    # The open lobby is drawn again, whole, in French.
    assert "Menteur" in (bot.fake.message(GROUP_ID, lobby.message_id).plain_text or "")
    await bot.press(PLAYER, GROUP_ID, "Deutsch")
    assert await bot.store.settings.group_language(GROUP_ID) == "fr"


async def test_a_player_chooses_the_language_of_their_private_messages(bot: BotHarness) -> None:
    bot.fake.started_users.add(PLAYER.id)
    await bot.command(PLAYER, "/language", chat=private(PLAYER))
    await bot.press(PLAYER, PLAYER.id, "Русский")
    assert await bot.store.settings.user_language(PLAYER.id) == "ru"
    await bot.command(PLAYER, "/help", chat=private(PLAYER))
    assert "Верю" in (bot.fake.last_message(PLAYER.id).plain_text or "")


async def test_names_with_markup_rtl_marks_and_4096_characters_render_safely(
    redis: Redis,
) -> None:
    bot = await make_harness(redis)
    try:
        strange = [
            User(81, "<b>&amp; </b>"),
            User(82, "\u202eevil\u202c مرحبا"),
            User(83, "x" * 4096),
        ]
        await bot.command(strange[0], "/new")
        bot.fake.set_members(GROUP_ID, [user.id for user in strange])
        for user in strange:
            await bot.start_private(user, f"j{GROUP_ID}")
        lobby = bot.fake.visible_messages(GROUP_ID)[0].plain_text or ""
        assert "<b>&amp; </b>" in lobby and "مرحبا" in lobby and len(lobby) < 4096
    finally:
        await bot.app.shutdown()
    bot.fake.assert_clean()
