"""Tests for the offline Telegram in tests/support (FakeTelegram and UpdateFactory)."""

from __future__ import annotations

import asyncio
import html
import json
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeChat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    MessageEntity,
    Update,
)
from telegram.constants import ChatMemberStatus, ParseMode
from telegram.error import BadRequest, ChatMigrated, Conflict, Forbidden, NetworkError, RetryAfter
from telegram.ext import ApplicationBuilder, CallbackQueryHandler, CommandHandler, ContextTypes

from tests.support.fake_telegram import (
    BOT_ID,
    SPEC,
    SPEC_AVAILABLE,
    FakeTelegram,
    SpecMissingWarning,
    check_deep_link,
    check_request,
    check_telegram_html,
    load_spec,
    parse_telegram_html,
)
from tests.support.updates import UpdateFactory, User, channel, group, private

TOKEN = f"{BOT_ID}:TEST-TOKEN-for-the-fake"
GROUP_ID = -1001234567890
ALICE = User(1001, "Alice", username="alice")
BOB = User(1002, "Bob")

needs_spec = pytest.mark.skipif(
    not SPEC_AVAILABLE, reason="api.json absent: Bot API schema checks are skipped"
)


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram(poll_interval=0.01)


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        yield bot


@pytest.fixture
def users(fake: FakeTelegram) -> UpdateFactory:
    return UpdateFactory(fake)


def keyboard(*labels: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(label, callback_data=label.lower())] for label in labels]
    )


def raw_keyboard(*buttons: dict[str, Any]) -> dict[str, Any]:
    return {"inline_keyboard": [list(buttons)]}


# ---------------------------------------------------------------------------------------------
# Wiring into python-telegram-bot
# ---------------------------------------------------------------------------------------------


async def test_bot_initialize_gets_the_bot_user(fake: FakeTelegram) -> None:
    fake.username = "cheat_test_bot"
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        assert bot.id == BOT_ID
        assert bot.username == "cheat_test_bot"
        assert bot.bot.is_bot and bot.bot.can_join_groups
    assert [call.method for call in fake.calls] == ["getMe"]
    assert not fake.initialized  # shut down with the bot


async def test_application_builder_routes_all_requests_to_the_fake(fake: FakeTelegram) -> None:
    app = ApplicationBuilder().token(TOKEN).request(fake).get_updates_request(fake).build()
    async with app:
        await app.bot.send_message(GROUP_ID, "hello")
        assert await app.bot.get_updates(timeout=0) == ()
    assert [call.method for call in fake.calls] == ["getMe", "sendMessage", "getUpdates"]
    fake.assert_clean()


async def test_custom_base_url_uses_only_the_last_path_segment(fake: FakeTelegram) -> None:
    async with Bot(
        TOKEN, base_url="http://localhost:8081/bot", request=fake, get_updates_request=fake
    ) as bot:
        await bot.send_message(GROUP_ID, "via a local Bot API server")
    assert fake.calls_to("sendMessage")[0].params["text"] == "via a local Bot API server"


async def test_calls_are_recorded_with_decoded_params(fake: FakeTelegram, bot: Bot) -> None:
    await bot.send_message(GROUP_ID, "pick", reply_markup=keyboard("Join"))
    (call,) = fake.calls_to("sendMessage")
    assert call.params["chat_id"] == GROUP_ID
    assert call.params["reply_markup"] == {
        "inline_keyboard": [[{"text": "Join", "callback_data": "join"}]]
    }
    assert call.status == 200 and call.result["text"] == "pick"
    fake.clear()
    assert fake.calls == []
    assert fake.calls_to("sendMessage") == []


async def test_polling_get_updates_delivers_pushed_updates_and_pauses_when_empty(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=5) == ()
    assert time.monotonic() - started >= fake.poll_interval  # no busy loop for the poller

    fake.push_update(users.text(group(GROUP_ID), ALICE, "hi"))
    (update,) = await bot.get_updates()
    assert update.message is not None and update.message.text == "hi"
    # Confirming with offset forgets it, as on Telegram.
    assert await bot.get_updates(offset=update.update_id + 1, timeout=0) == ()


async def test_get_updates_conflicts_with_an_active_webhook(fake: FakeTelegram, bot: Bot) -> None:
    await bot.set_webhook("https://example.org/hook")
    info = await bot.get_webhook_info()
    assert info.url == "https://example.org/hook"
    with pytest.raises(Conflict, match=r"(?i)webhook is active"):
        await bot.get_updates(timeout=0)
    await bot.delete_webhook()
    assert (await bot.get_webhook_info()).url == ""
    assert await bot.get_updates(timeout=0) == ()


# ---------------------------------------------------------------------------------------------
# Messages: sending, editing, deleting
# ---------------------------------------------------------------------------------------------


async def test_send_message_round_trip(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "Who plays?", reply_markup=keyboard("Join", "Start"))
    assert isinstance(sent, Message)
    assert sent.chat.id == GROUP_ID and sent.chat.type == "supergroup"
    assert sent.from_user is not None and sent.from_user.id == BOT_ID
    assert sent.text == "Who plays?"
    assert sent.reply_markup == keyboard("Join", "Start")

    record = fake.messages[(GROUP_ID, sent.message_id)]
    assert record.text == "Who plays?" and not record.deleted
    assert [button["text"] for button in record.buttons] == ["Join", "Start"]
    assert fake.last_message(GROUP_ID) is record


async def test_message_ids_increase_per_chat(fake: FakeTelegram, bot: Bot) -> None:
    fake.started_users.add(ALICE.id)
    first = await bot.send_message(GROUP_ID, "one")
    second = await bot.send_message(GROUP_ID, "two")
    private_first = await bot.send_message(ALICE.id, "dm")
    assert second.message_id == first.message_id + 1
    assert private_first.message_id == 1
    assert private_first.chat.type == "private"


async def test_group_chats_get_their_registered_title_and_type(
    fake: FakeTelegram, bot: Bot
) -> None:
    fake.register_chat(group(-4001, "Friday cards"))
    sent = await bot.send_message(-4001, "hi")
    assert sent.chat.type == "group" and sent.chat.title == "Friday cards"


async def test_edit_message_text_round_trip_keeps_history(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "Round 1", reply_markup=keyboard("Call cheat"))
    edited = await bot.edit_message_text(
        "Round 2", chat_id=GROUP_ID, message_id=sent.message_id, reply_markup=keyboard("Pass")
    )
    assert isinstance(edited, Message)
    assert edited.text == "Round 2" and edited.edit_date is not None
    assert edited.reply_markup == keyboard("Pass")
    record = fake.message(GROUP_ID, sent.message_id)
    assert [version.text for version in record.history] == ["Round 1", "Round 2"]
    assert record.buttons == [{"text": "Pass", "callback_data": "pass"}]


async def test_edit_without_reply_markup_removes_the_keyboard(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "Round 1", reply_markup=keyboard("Call cheat"))
    edited = await bot.edit_message_text("Round 2", chat_id=GROUP_ID, message_id=sent.message_id)
    assert isinstance(edited, Message) and edited.reply_markup is None
    assert fake.buttons(GROUP_ID, sent.message_id) == []


async def test_identical_edit_is_not_modified(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "<b>Turn</b>", parse_mode=ParseMode.HTML)
    with pytest.raises(BadRequest, match=r"(?i)message is not modified"):
        await bot.edit_message_text(
            "<b>Turn</b>", chat_id=GROUP_ID, message_id=sent.message_id, parse_mode="HTML"
        )
    # Same characters but different formatting *is* a modification.
    await bot.edit_message_text("Turn", chat_id=GROUP_ID, message_id=sent.message_id)
    assert fake.errors[0].error is not None and "not modified" in fake.errors[0].error
    fake.assert_clean()  # state errors are Telegram's answers, not request violations


async def test_edit_reply_markup(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(GROUP_ID, "Vote", reply_markup=keyboard("Yes"))
    edited = await bot.edit_message_reply_markup(
        GROUP_ID, sent.message_id, reply_markup=keyboard("Yes", "No")
    )
    assert isinstance(edited, Message) and edited.text == "Vote"
    assert len(fake.buttons(GROUP_ID, sent.message_id)) == 2
    with pytest.raises(BadRequest, match=r"(?i)not modified"):
        await bot.edit_message_reply_markup(
            GROUP_ID, sent.message_id, reply_markup=keyboard("Yes", "No")
        )
    await bot.edit_message_reply_markup(GROUP_ID, sent.message_id)
    assert fake.message(GROUP_ID, sent.message_id).reply_markup is None


async def test_inline_message_edits_answer_true(bot: Bot) -> None:
    assert await bot.edit_message_text("x", inline_message_id="AAEAAQ") is True


async def test_edit_or_delete_unknown_message_is_not_found(bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await bot.edit_message_text("x", chat_id=GROUP_ID, message_id=999)
    with pytest.raises(BadRequest, match=r"(?i)message to delete not found"):
        await bot.delete_message(GROUP_ID, 999)


async def test_delete_hides_the_message_and_it_stays_deleted(fake: FakeTelegram, bot: Bot) -> None:
    first = await bot.send_message(GROUP_ID, "first", reply_markup=keyboard("Old"))
    second = await bot.send_message(GROUP_ID, "second")
    assert await bot.delete_message(GROUP_ID, first.message_id) is True
    assert fake.messages[(GROUP_ID, first.message_id)].deleted
    assert fake.visible_messages(GROUP_ID) == [fake.message(GROUP_ID, second.message_id)]
    assert fake.texts(GROUP_ID) == ["second"]
    assert fake.find_button(GROUP_ID, "Old") is None
    with pytest.raises(BadRequest, match=r"(?i)to edit not found"):
        await bot.edit_message_text("again", chat_id=GROUP_ID, message_id=first.message_id)
    with pytest.raises(BadRequest, match=r"(?i)to delete not found"):
        await bot.delete_message(GROUP_ID, first.message_id)


async def test_deleting_users_messages_in_groups_needs_admin_rights(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    update = users.command(group(GROUP_ID), ALICE, "/new")
    message_id = update["message"]["message_id"]
    with pytest.raises(BadRequest, match=r"(?i)can't be deleted"):
        await bot.delete_message(GROUP_ID, message_id)
    fake.set_admins(GROUP_ID, {BOT_ID})
    assert await bot.delete_message(GROUP_ID, message_id) is True
    with pytest.raises(BadRequest, match=r"(?i)can't be edited"):
        await bot.edit_message_text("x", chat_id=GROUP_ID, message_id=message_id)


async def test_last_message_and_find_button_prefer_newest(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(LookupError):
        fake.last_message(GROUP_ID)
    old = await bot.send_message(GROUP_ID, "old", reply_markup=keyboard("Play 1"))
    new = await bot.send_message(GROUP_ID, "new", reply_markup=keyboard("Play 2", "Pass"))
    assert fake.last_message(GROUP_ID).message_id == new.message_id
    assert fake.find_button(GROUP_ID, "Play") == (
        new.message_id,
        {"text": "Play 2", "callback_data": "play 2"},
    )
    found = fake.find_button(GROUP_ID, lambda b: b.get("callback_data") == "play 1")
    assert found is not None and found[0] == old.message_id
    assert fake.find_button(GROUP_ID, "Nope") is None


async def test_html_message_is_stored_and_answered_after_entity_parsing(
    fake: FakeTelegram, bot: Bot
) -> None:
    text = "<b>Alice</b> &amp; <i>Bob</i> &lt;3 &#9824; <a href='tg://user?id=1002'>Bob</a>"
    sent = await bot.send_message(GROUP_ID, text, parse_mode=ParseMode.HTML)
    assert sent.text == "Alice & Bob <3 \u2660 Bob"
    bold, italic, mention = sent.entities
    assert (bold.type, bold.offset, bold.length) == (MessageEntity.BOLD, 0, 5)
    assert (italic.type, italic.offset, italic.length) == (MessageEntity.ITALIC, 8, 3)
    assert mention.type == MessageEntity.TEXT_MENTION and mention.user is not None
    assert mention.user.id == BOB.id
    record = fake.last_message(GROUP_ID)
    assert record.text == text and record.parse_mode == "HTML"
    assert record.plain_text == sent.text
    fake.assert_clean()


async def test_media_messages_are_recorded_with_captions(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_photo(
        GROUP_ID, "AgACAgIAAxkBAAIB", caption="<i>table</i>", parse_mode="HTML"
    )
    assert sent.photo and sent.caption == "table"
    assert fake.last_message(GROUP_ID).kind == "photo"
    with pytest.raises(BadRequest, match=r"(?i)no text in the message"):
        await bot.edit_message_text("x", chat_id=GROUP_ID, message_id=sent.message_id)
    fake.assert_clean()


# ---------------------------------------------------------------------------------------------
# Validation against the Bot API spec
# ---------------------------------------------------------------------------------------------


@needs_spec
async def test_unknown_field_is_a_violation_and_a_bad_request(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)colour: unknown field"):
        await bot.send_message(GROUP_ID, "hi", api_kwargs={"colour": "red"})
    assert len(fake.violations) == 1
    assert fake.violations[0].startswith("sendMessage: colour: unknown field")
    assert fake.calls[-1].status == 400
    assert fake.messages == {}  # Telegram refused it: nothing was sent
    with pytest.raises(AssertionError, match="colour"):
        fake.assert_clean()


@needs_spec
@pytest.mark.filterwarnings("ignore:Please use 'Bot")
async def test_missing_required_field(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)text: required field missing"):
        await bot.do_api_request("sendMessage", api_kwargs={"chat_id": GROUP_ID})
    assert fake.violations == ["sendMessage: text: required field missing (method sendMessage)"]


@needs_spec
@pytest.mark.filterwarnings("ignore:Please use 'Bot")
async def test_wrong_value_type(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest):
        await bot.do_api_request(
            "sendMessage", api_kwargs={"chat_id": 1.5, "text": "x", "disable_notification": "no"}
        )
    assert any("chat_id: expected Integer or String, got Float" in v for v in fake.violations)
    assert any("disable_notification: expected Boolean" in v for v in fake.violations)


@needs_spec
async def test_unknown_method_answers_404(fake: FakeTelegram, bot: Bot) -> None:
    from telegram.error import EndPointNotFound

    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("sendMesage", api_kwargs={"chat_id": 1, "text": "x"})
    assert fake.violations == [
        "sendMesage: unknown method 'sendMesage' (did you mean 'sendMessage'?)"
    ]


async def test_valid_methods_without_a_model_answer_true(fake: FakeTelegram, bot: Bot) -> None:
    assert await bot.pin_chat_message(GROUP_ID, 1) is True
    assert await bot.send_chat_action(GROUP_ID, "typing") is True
    fake.assert_clean()


@needs_spec
async def test_misspelled_button_field_is_caught_inside_the_keyboard(
    fake: FakeTelegram, bot: Bot
) -> None:
    markup = raw_keyboard({"text": "Join", "callbak_data": "join"})
    with pytest.raises(BadRequest):
        await bot.send_message(GROUP_ID, "x", api_kwargs={"reply_markup": markup})
    assert any(
        "reply_markup.inline_keyboard[0][0].callbak_data: unknown field" in v
        and "did you mean 'callback_data'" in v
        for v in fake.violations
    )


async def test_reply_markup_given_as_a_json_string_is_decoded_and_checked(
    fake: FakeTelegram, bot: Bot
) -> None:
    good = json.dumps(raw_keyboard({"text": "a", "callback_data": "a"}))
    await bot.send_message(GROUP_ID, '{"not": "json to decode"}', api_kwargs={"reply_markup": good})
    (call,) = fake.calls_to("sendMessage")
    assert call.params["reply_markup"] == raw_keyboard({"text": "a", "callback_data": "a"})
    assert call.params["text"] == '{"not": "json to decode"}'  # a String field stays a string
    assert fake.last_message(GROUP_ID).buttons == [{"text": "a", "callback_data": "a"}]
    with pytest.raises(BadRequest):
        await bot.send_message(
            GROUP_ID, "x", api_kwargs={"reply_markup": json.dumps(raw_keyboard({"text": "a"}))}
        )
    assert "has no action" in fake.violations[0]


async def test_file_uploads_are_accepted_but_not_modelled(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_document(GROUP_ID, document=b"rules", filename="rules.txt")
    assert sent.document is not None
    assert fake.calls_to("sendDocument")[0].params["document"] == "document"
    assert fake.last_message(GROUP_ID).kind == "document"
    fake.assert_clean()


@needs_spec
async def test_bot_command_scope_union_accepts_any_subtype(fake: FakeTelegram, bot: Bot) -> None:
    await bot.set_my_commands(
        [BotCommand("new", "Start a game")], scope=BotCommandScopeChat(GROUP_ID)
    )
    await bot.set_my_commands([BotCommand("help", "How to play")])
    fake.assert_clean()
    assert [c.command for c in await bot.get_my_commands()] == ["help"]
    with pytest.raises(BadRequest):
        await bot.set_my_commands(
            [BotCommand("new", "x")], api_kwargs={"scope": {"type": "chatt", "chat_id": 1}}
        )
    assert "is not a BotCommandScope" in fake.violations[-1]
    with pytest.raises(BadRequest):
        await bot.set_my_commands(
            [BotCommand("new", "x")], api_kwargs={"scope": {"type": "default", "chat_id": 1}}
        )
    assert "chat_id: unknown field" in fake.violations[-1]


async def test_bot_commands_must_be_lowercase(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest):
        await bot.set_my_commands([BotCommand("New", "Start")])
    assert "BOT_COMMAND_INVALID" in fake.violations[0]


async def test_a_command_menu_is_for_a_two_letter_language(fake: FakeTelegram, bot: Bot) -> None:
    """Telegram takes "pt" for a menu, never "pt-br" or a catalog's "pt_BR"."""
    await bot.set_my_commands([BotCommand("new", "Abrir um jogo")], language_code="pt")
    fake.assert_clean()
    for code in ("pt_BR", "pt-br", "por", "PT"):
        with pytest.raises(BadRequest):
            await bot.set_my_commands([BotCommand("new", "Abrir um jogo")], language_code=code)
        assert "two-letter ISO 639-1" in fake.violations[-1]


@needs_spec
async def test_menu_button_and_chat_member_answers_match_the_spec(
    fake: FakeTelegram, bot: Bot
) -> None:
    from telegram import MenuButtonCommands

    fake.set_admins(GROUP_ID, {ALICE.id}, creator=BOB.id)
    fake.started_users.add(ALICE.id)
    await bot.set_chat_menu_button(menu_button=MenuButtonCommands())
    await bot.get_chat_menu_button()
    await bot.get_chat_member(GROUP_ID, ALICE.id)
    await bot.get_chat_member(GROUP_ID, BOB.id)
    await bot.get_chat_member(GROUP_ID, 3)
    await bot.get_chat_administrators(GROUP_ID)
    await bot.get_chat(GROUP_ID)
    await bot.get_chat(ALICE.id)
    await bot.get_webhook_info()
    sent = await bot.send_message(
        GROUP_ID, "<b>x</b>", parse_mode="HTML", reply_markup=keyboard("A")
    )
    await bot.edit_message_text("y", chat_id=GROUP_ID, message_id=sent.message_id)
    await bot.send_message(ALICE.id, "hi")
    fake.assert_clean()
    assert SPEC is not None
    # The fake's own answers must be what Telegram documents, or it would teach the bot wrong.
    for call in fake.calls:
        returns = SPEC.returns(call.method)
        assert call.status == 200, call
        assert SPEC.check_value(call.result, returns, call.method) == [], call


# ---------------------------------------------------------------------------------------------
# Limits stated in prose
# ---------------------------------------------------------------------------------------------


async def test_callback_data_must_be_at_most_64_bytes(fake: FakeTelegram, bot: Bot) -> None:
    ok = InlineKeyboardMarkup([[InlineKeyboardButton("ok", callback_data="x" * 64)]])
    await bot.send_message(GROUP_ID, "fits", reply_markup=ok)
    fake.assert_clean()
    for data in ("x" * 65, "\u00e9" * 33):  # 65 and 66 bytes of UTF-8
        too_long = InlineKeyboardMarkup([[InlineKeyboardButton("no", callback_data=data)]])
        with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
            await bot.send_message(GROUP_ID, "too long", reply_markup=too_long)
    assert len(fake.violations) == 2
    assert "65 bytes" in fake.violations[0] and "66 bytes" in fake.violations[1]


async def test_empty_callback_data_is_invalid(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest):
        await bot.send_message(
            GROUP_ID,
            "x",
            api_kwargs={"reply_markup": raw_keyboard({"text": "a", "callback_data": ""})},
        )
    assert "0 bytes" in fake.violations[0]


async def test_at_most_100_inline_buttons(fake: FakeTelegram, bot: Bot) -> None:
    def grid(count: int) -> InlineKeyboardMarkup:
        buttons = [InlineKeyboardButton(str(n), callback_data=str(n)) for n in range(count)]
        return InlineKeyboardMarkup([buttons[i : i + 8] for i in range(0, count, 8)])

    await bot.send_message(GROUP_ID, "100", reply_markup=grid(100))
    fake.assert_clean()
    with pytest.raises(BadRequest):
        await bot.send_message(GROUP_ID, "101", reply_markup=grid(101))
    assert fake.violations == [
        "sendMessage: reply_markup: 101 inline buttons, Telegram allows at most 100 "
        "(REPLY_MARKUP_TOO_LONG)"
    ]


@pytest.mark.parametrize(
    ("button", "expected"),
    [
        ({"text": "Join"}, "has no action"),
        ({"text": "Join", "callback_data": "j", "url": "https://example.org"}, "2 actions"),
        ({"text": "", "callback_data": "j"}, "button text must be non-empty"),
        ({"text": "   ", "callback_data": "j"}, "button text must be non-empty"),
    ],
)
async def test_inline_button_shape(
    fake: FakeTelegram, bot: Bot, button: dict[str, Any], expected: str
) -> None:
    with pytest.raises(BadRequest):
        await bot.send_message(GROUP_ID, "x", api_kwargs={"reply_markup": raw_keyboard(button)})
    assert any(expected in violation for violation in fake.violations), fake.violations


async def test_text_length_counts_characters_after_html_parsing(
    fake: FakeTelegram, bot: Bot
) -> None:
    await bot.send_message(GROUP_ID, "x" * 4096)
    await bot.send_message(GROUP_ID, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")
    await bot.send_message(GROUP_ID, "&lt;" * 4096, parse_mode="HTML")
    await bot.send_message(GROUP_ID, "\u2660" * 4096)  # characters, not UTF-8 bytes
    fake.assert_clean()
    with pytest.raises(BadRequest, match=r"(?i)too long"):
        await bot.send_message(GROUP_ID, "x" * 4097)
    with pytest.raises(BadRequest, match=r"(?i)too long"):
        await bot.edit_message_text("y" * 4097, chat_id=GROUP_ID, message_id=1)
    assert len(fake.violations) == 2
    assert "4097 characters" in fake.violations[0]


async def test_empty_text_is_refused(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)empty"):
        await bot.send_message(GROUP_ID, " \n ")
    with pytest.raises(BadRequest, match=r"(?i)empty"):
        await bot.send_message(GROUP_ID, "<b></b>", parse_mode="HTML")


async def test_caption_limit(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)too long"):
        await bot.send_photo(GROUP_ID, "AgACAgIAAxkBAAIB", caption="c" * 1025)


async def test_callback_answer_text_limit_and_double_answers(fake: FakeTelegram, bot: Bot) -> None:
    assert await bot.answer_callback_query("1", text="t" * 200) is True
    assert fake.callback_answers["1"]["text"] == "t" * 200
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await bot.answer_callback_query("1")
    fake.assert_clean()
    with pytest.raises(BadRequest, match=r"(?i)at most 200"):
        await bot.answer_callback_query("2", text="t" * 201)
    assert fake.violations == [
        "answerCallbackQuery: text: callback answer of 201 characters, Telegram allows at most 200"
    ]


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://t.me/tgcheat_bot?start=join_-1001234567890", True),
        ("https://t.me/tgcheat_bot?startgroup=true", True),
        ("tg://resolve?domain=tgcheat_bot&start=abc", True),
        ("https://example.org/?start=has space", True),  # not a Telegram link
        ("https://t.me/tgcheat_bot?start=has%20space", False),
        ("https://t.me/tgcheat_bot?start=" + "a" * 65, False),
        ("https://telegram.me/tgcheat_bot?start=a.b", False),
        ("tg://resolve?domain=tgcheat_bot&start=a!b", False),
    ],
)
def test_deep_link_payloads(url: str, ok: bool) -> None:
    assert (check_deep_link(url) == []) is ok


async def test_deep_links_are_checked_in_buttons_and_html_links(
    fake: FakeTelegram, bot: Bot
) -> None:
    good = "https://t.me/tgcheat_bot?start=g-100123_a"
    bad = "https://t.me/tgcheat_bot?start=" + "p" * 65
    await bot.send_message(
        GROUP_ID,
        f'<a href="{good}">join</a>',
        parse_mode="HTML",
        reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("Join", url=good)]]),
    )
    fake.assert_clean()
    with pytest.raises(BadRequest, match=r"(?i)deep-link"):
        await bot.send_message(
            GROUP_ID, "x", reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("J", url=bad)]])
        )
    with pytest.raises(BadRequest, match=r"(?i)deep-link"):
        await bot.send_message(GROUP_ID, f'<a href="{bad}">join</a>', parse_mode="HTML")
    assert len(fake.violations) == 2


async def test_unknown_parse_mode(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)parse mode"):
        await bot.send_message(GROUP_ID, "x", parse_mode="XML")


# ---------------------------------------------------------------------------------------------
# Telegram's HTML
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<b>x", 'Can\'t find end tag corresponding to start tag "b"'),
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("<div>x</div>", 'Unsupported start tag "div" at byte offset 0'),
        ("<br/>", 'Unsupported start tag "br"'),
        ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("a > b", "Unescaped '>' at byte offset 2"),
        ("fish & chips", "Unescaped '&' at byte offset 5"),
        ("a&nbsp;b", "Unsupported HTML entity '&nbsp;'"),
        ("&#0;", "Invalid numeric entity"),
        ('<span class="x">s</span>', 'Tag "span" must have class "tg-spoiler"'),
        ("<span>s</span>", 'Tag "span" must have class "tg-spoiler"'),
        ("<a>link</a>", 'Tag "a" needs an href'),
        ('<a href="https://x.org/?a=1&b=2">x</a>', "Unescaped '&'"),
        ("<code><b>x</b></code>", "pre and code entities can't contain other entities"),
        ("<pre><i>x</i></pre>", "pre and code entities can't contain other entities"),
        ('<a href="https://a.org"><code>x</code></a>', "can't contain each other"),
        ("<blockquote><blockquote>x</blockquote></blockquote>", "nested in a blockquote"),
        ("<tg-emoji>x</tg-emoji>", 'must have attribute "emoji-id"'),
        ("<b", "Unclosed start tag at byte offset 0"),
        ('<a href="x>y</a>', 'Unclosed start tag "a"'),
        ("\u2660 <x>", "at byte offset 4"),  # offsets count UTF-8 bytes, like Telegram's
    ],
)
def test_bad_html_is_reported(text: str, expected: str) -> None:
    problems = check_telegram_html(text)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    "text",
    [
        "plain text",
        "<b>bold</b> <strong>strong</strong> <i>i</i> <em>em</em> <u>u</u> <ins>ins</ins>",
        "<s>s</s> <strike>strike</strike> <del>del</del>",
        '<tg-spoiler>hidden</tg-spoiler> <span class="tg-spoiler">hidden</span>',
        "<b>bold <i>italic <u>underline <s>struck</s></u></i></b>",
        '<a href="https://t.me/tgcheat_bot?start=x&amp;y">link <b>bold</b></a>',
        "<code>x &lt; y</code>",
        '<pre><code class="language-python">print("&amp;")</code></pre>',
        "<pre>block</pre>",
        "<blockquote>quote</blockquote><blockquote expandable>more</blockquote>",
        '<tg-emoji emoji-id="5368324170671202286">\U0001f44d</tg-emoji>',
        "&lt;&gt;&amp;&quot; &#9824; &#x2665; \u2666\u2663",
        "<B>upper case tags</B>",
        "<b>spades \u2660</b> and <i>joker \U0001f0cf</i>",
        "a\nb",
    ],
)
def test_valid_html_passes(text: str) -> None:
    assert check_telegram_html(text) == []


def test_html_entities_have_utf16_offsets_and_pre_language() -> None:
    parsed = parse_telegram_html(
        '\U0001f0cf <b>x</b><pre><code class="language-py">y</code></pre>'
        "<blockquote expandable>q</blockquote>"
    )
    assert parsed.problems == []
    assert parsed.text == "\U0001f0cf xyq"
    assert parsed.entities == [
        {"offset": 3, "length": 1, "type": "bold"},  # the joker emoji is 2 UTF-16 units
        {"offset": 4, "length": 1, "type": "pre", "language": "py"},
        {"offset": 5, "length": 1, "type": "expandable_blockquote"},
    ]


@given(st.text(max_size=200))
def test_escaped_text_is_valid_html_and_parses_back(text: str) -> None:
    escaped = html.escape(text, quote=False)
    parsed = parse_telegram_html(f"<b>{escaped}</b>")
    assert parsed.problems == []
    assert parsed.text == text


@given(st.text(alphabet="<>&b/i ", min_size=1, max_size=12))
def test_html_checker_never_crashes(text: str) -> None:
    parsed = parse_telegram_html(text)
    assert isinstance(parsed.problems, list)
    if "<" not in text and ">" not in text and "&" not in text:
        assert parsed.problems == [] and parsed.text == text


async def test_bad_html_through_the_bot_is_a_bad_request(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(BadRequest, match=r"(?i)can't parse entities"):
        await bot.send_message(GROUP_ID, "Alice played 3 cards <b>bluff?", parse_mode="HTML")
    assert fake.violations == [
        "sendMessage: text: can't parse entities: Can't find end tag corresponding to start "
        'tag "b"'
    ]


def test_check_request_is_usable_on_its_own() -> None:
    fine = {"chat_id": GROUP_ID, "text": "<b>ok</b>", "parse_mode": "HTML"}
    assert check_request("sendMessage", fine) == []
    assert check_request("sendMessage", {**fine, "text": "<b>ok"}) != []


# ---------------------------------------------------------------------------------------------
# Private chats, groups, errors
# ---------------------------------------------------------------------------------------------


async def test_users_who_did_not_start_the_bot_cannot_be_messaged(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    with pytest.raises(Forbidden, match=r"(?i)bot can't initiate conversation with a user"):
        await bot.send_message(ALICE.id, "your cards")
    assert fake.visible_messages(ALICE.id) == []
    users.start_private(ALICE)
    assert ALICE.id in fake.started_users
    sent = await bot.send_message(ALICE.id, "your cards")
    assert sent.chat.first_name == "Alice" and sent.chat.username == "alice"
    fake.assert_clean()


async def test_blocked_users(fake: FakeTelegram, bot: Bot, users: UpdateFactory) -> None:
    users.start_private(ALICE)
    sent = await bot.send_message(ALICE.id, "hand")
    users.my_chat_member(private(ALICE), ALICE, "member", "kicked")  # Alice blocks the bot
    assert ALICE.id in fake.blocked_users
    with pytest.raises(Forbidden, match=r"(?i)bot was blocked by the user"):
        await bot.send_message(ALICE.id, "hand")
    with pytest.raises(Forbidden, match=r"(?i)blocked"):
        await bot.edit_message_text("new hand", chat_id=ALICE.id, message_id=sent.message_id)
    users.start_private(ALICE)  # restarting unblocks
    await bot.send_message(ALICE.id, "hand")


async def test_kicked_bot_gets_forbidden_in_that_group(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    table = group(GROUP_ID)
    users.my_chat_member(table, ALICE, "member", "kicked")
    with pytest.raises(Forbidden, match=r"(?i)bot was kicked from the supergroup chat"):
        await bot.send_message(GROUP_ID, "hello?")
    assert (await bot.get_chat_member(-5, BOT_ID)).status == ChatMemberStatus.MEMBER
    users.my_chat_member(table, ALICE, "left", "administrator")
    await bot.send_message(GROUP_ID, "back")
    assert (await bot.get_chat_member(GROUP_ID, BOT_ID)).status == ChatMemberStatus.ADMINISTRATOR


async def test_migrated_group_raises_chat_migrated(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    update = Update.de_json(users.migrate(-4001, GROUP_ID, "Cards"), bot)
    assert update.message is not None and update.message.migrate_to_chat_id == GROUP_ID
    with pytest.raises(ChatMigrated) as caught:
        await bot.send_message(-4001, "hi")
    assert caught.value.new_chat_id == GROUP_ID
    sent = await bot.send_message(GROUP_ID, "hi")
    assert sent.chat.title == "Cards" and sent.chat.type == "supergroup"


# PTB itself reads RetryAfter.retry_after, which warns about its future type.
@pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")
async def test_fail_next_injects_one_error(fake: FakeTelegram, bot: Bot) -> None:
    fake.fail_next("sendMessage", 429, retry_after=3)
    fake.fail_next("sendMessage", 502)
    with pytest.raises(RetryAfter, match="Retry in 3 seconds"):
        await bot.send_message(GROUP_ID, "x")
    with pytest.raises(NetworkError, match=r"(?i)Bad Gateway"):
        await bot.send_message(GROUP_ID, "x")
    await bot.send_message(GROUP_ID, "x")
    assert [call.status for call in fake.calls_to("sendMessage")] == [429, 502, 200]
    assert len(fake.visible_messages(GROUP_ID)) == 1
    fake.fail_next("editMessageText", 400, "Bad Request: message can't be edited")
    with pytest.raises(BadRequest, match=r"(?i)can't be edited"):
        await bot.edit_message_text("y", chat_id=GROUP_ID, message_id=1)


async def test_chat_members_and_admins(fake: FakeTelegram, bot: Bot) -> None:
    fake.register_user(ALICE.to_dict())
    fake.set_admins(GROUP_ID, {ALICE.id}, creator=BOB.id)
    fake.set_left(GROUP_ID, {3})
    alice = await bot.get_chat_member(GROUP_ID, ALICE.id)
    assert alice.status == ChatMemberStatus.ADMINISTRATOR and alice.user.first_name == "Alice"
    assert (await bot.get_chat_member(GROUP_ID, BOB.id)).status == ChatMemberStatus.OWNER
    assert (await bot.get_chat_member(GROUP_ID, 3)).status == ChatMemberStatus.LEFT
    # Nobody it was not told of is in the group.
    assert (await bot.get_chat_member(GROUP_ID, 4)).status == ChatMemberStatus.LEFT
    fake.set_members(GROUP_ID, {4, ALICE.id})
    assert (await bot.get_chat_member(GROUP_ID, 4)).status == ChatMemberStatus.MEMBER
    admins = await bot.get_chat_administrators(GROUP_ID)
    assert {admin.user.id for admin in admins} == {ALICE.id, BOB.id}
    fake.set_admins(GROUP_ID, set())
    assert (await bot.get_chat_member(GROUP_ID, ALICE.id)).status == ChatMemberStatus.MEMBER


# ---------------------------------------------------------------------------------------------
# UpdateFactory
# ---------------------------------------------------------------------------------------------


async def test_command_update_parses_with_a_bot_command_entity(
    bot: Bot, users: UpdateFactory
) -> None:
    data = users.command(group(GROUP_ID, "Cheat table"), ALICE, "/new@tgcheat_bot", "3 decks")
    update = Update.de_json(data, bot)
    message = update.message
    assert message is not None and message.text == "/new@tgcheat_bot 3 decks"
    assert message.chat.type == "supergroup" and message.chat.title == "Cheat table"
    assert message.from_user is not None and message.from_user.id == ALICE.id
    (entity,) = message.entities
    assert (entity.type, entity.offset, entity.length) == (MessageEntity.BOT_COMMAND, 0, 16)
    assert users.command(group(GROUP_ID), ALICE, "new")["update_id"] == update.update_id + 1


async def test_text_update_marks_commands_anywhere(bot: Bot, users: UpdateFactory) -> None:
    update = Update.de_json(users.text(group(-4001), BOB, "\U0001f0cf try /help now"), bot)
    assert update.message is not None
    assert update.message.parse_entities(["bot_command"]) == {
        MessageEntity("bot_command", 7, 5): "/help"
    }
    no_command = Update.de_json(users.text(group(-4001), BOB, "a/b"), bot).message
    assert no_command is not None and no_command.entities == ()


async def test_start_private_with_payload(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    update = Update.de_json(users.start_private(BOB, "join_-1001234567890"), bot)
    message = update.message
    assert message is not None and message.chat.type == "private"
    assert message.chat.id == BOB.id and message.text == "/start join_-1001234567890"
    assert message.entities[0].length == len("/start")
    assert BOB.id in fake.started_users
    # Without a fake in the factory the fake can still be passed in.
    other = FakeTelegram()
    UpdateFactory().start_private(ALICE, fake=other)
    assert other.started_users == {ALICE.id}


async def test_press_builds_a_callback_from_the_bot_message(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    sent = await bot.send_message(
        GROUP_ID, "<b>Lobby</b>", parse_mode="HTML", reply_markup=keyboard("Join")
    )
    update = Update.de_json(users.press(fake, ALICE, GROUP_ID, "Join"), bot)
    query = update.callback_query
    assert query is not None and query.data == "join"
    assert query.from_user.id == ALICE.id and query.chat_instance
    assert isinstance(query.message, Message)
    assert query.message.message_id == sent.message_id
    assert query.message.text == "Lobby" and query.message.entities == sent.entities
    assert query.message.reply_markup == keyboard("Join")
    other = Update.de_json(users.callback(ALICE, fake.last_message(GROUP_ID), "join"), bot)
    assert other.callback_query is not None and other.callback_query.id != query.id


async def test_press_without_a_matching_button_says_what_there_is(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    await bot.send_message(GROUP_ID, "Lobby", reply_markup=keyboard("Join", "Start"))
    with pytest.raises(LookupError, match=r"no button matching 'Leave'.*\['Join', 'Start'\]"):
        users.press(fake, ALICE, GROUP_ID, "Leave")
    url_only = InlineKeyboardMarkup([[InlineKeyboardButton("Rules", url="https://example.org")]])
    await bot.send_message(GROUP_ID, "Read", reply_markup=url_only)
    with pytest.raises(ValueError, match="no callback_data"):
        users.press(fake, ALICE, GROUP_ID, "Rules")


async def test_membership_updates_parse(bot: Bot, users: UpdateFactory) -> None:
    table = group(GROUP_ID)
    mine = Update.de_json(users.my_chat_member(table, ALICE, "left", "member"), bot)
    assert mine.my_chat_member is not None
    assert mine.my_chat_member.new_chat_member.user.id == BOT_ID
    assert mine.my_chat_member.new_chat_member.status == ChatMemberStatus.MEMBER
    assert mine.my_chat_member.old_chat_member.status == ChatMemberStatus.LEFT

    theirs = Update.de_json(users.chat_member(table, BOB, "member", "restricted", actor=ALICE), bot)
    assert theirs.chat_member is not None and theirs.chat_member.from_user.id == ALICE.id
    assert theirs.chat_member.new_chat_member.status == ChatMemberStatus.RESTRICTED

    left = Update.de_json(users.left_chat_member(table, BOB), bot)
    assert left.message is not None and left.message.left_chat_member is not None
    assert left.message.left_chat_member.id == BOB.id
    joined = Update.de_json(users.new_chat_members(table, [ALICE, BOB]), bot)
    assert joined.message is not None
    assert [u.id for u in joined.message.new_chat_members] == [ALICE.id, BOB.id]


async def test_membership_updates_keep_the_fake_in_step(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    table = group(GROUP_ID)
    users.chat_member(table, BOB, "member", "administrator")
    assert (await bot.get_chat_member(GROUP_ID, BOB.id)).status == "administrator"
    users.left_chat_member(table, BOB)
    assert (await bot.get_chat_member(GROUP_ID, BOB.id)).status == "left"


async def test_who_writes_or_taps_in_a_group_is_in_it(
    fake: FakeTelegram, bot: Bot, users: UpdateFactory
) -> None:
    """Only someone in a group writes there or sees its buttons; one known to have left
    stays out; an admin stays an admin."""
    table = group(GROUP_ID)
    carol = User(1003, "Carol")
    assert (await bot.get_chat_member(GROUP_ID, ALICE.id)).status == "left"
    users.command(table, ALICE, "/new")
    sent = await bot.send_message(GROUP_ID, "Who plays?")
    users.callback(BOB, sent, "x")
    assert (await bot.get_chat_member(GROUP_ID, ALICE.id)).status == "member"
    assert (await bot.get_chat_member(GROUP_ID, BOB.id)).status == "member"
    fake.set_left(GROUP_ID, {carol.id})
    users.text(table, carol, "hi")
    assert (await bot.get_chat_member(GROUP_ID, carol.id)).status == "left"
    fake.set_admins(GROUP_ID, {ALICE.id})
    users.text(table, ALICE, "hi")
    fake.set_members(GROUP_ID, {ALICE.id})
    assert (await bot.get_chat_member(GROUP_ID, ALICE.id)).status == "administrator"
    # The private chat is no group: writing there makes nobody a member of one.
    users.start_private(carol)
    assert (await bot.get_chat_member(GROUP_ID, carol.id)).status == "left"


async def test_commands_written_on_behalf_of_a_chat(bot: Bot, users: UpdateFactory) -> None:
    """An anonymous admin writes as the group (GroupAnonymousBot), a channel as itself
    (Channel_Bot); replies carry the message replied to."""
    table = group(GROUP_ID)
    news = channel()
    anonymous = Update.de_json(users.command_as_chat(table, table, "/stop"), bot)
    posted = Update.de_json(users.command_as_chat(table, news, "/new", "free"), bot)
    assert anonymous.message is not None and posted.message is not None
    assert anonymous.message.sender_chat is not None
    assert anonymous.message.sender_chat.id == GROUP_ID
    assert anonymous.message.from_user is not None
    assert anonymous.message.from_user.id == 1087968824
    assert posted.message.sender_chat is not None and posted.message.sender_chat.type == "channel"
    assert posted.message.from_user is not None and posted.message.from_user.id == 136817688
    assert posted.message.text == "/new free" and posted.message.entities[0].length == 4
    said = users.text(table, ALICE, "hello")["message"]
    reply = Update.de_json(users.command(table, BOB, "/kick", reply_to=said), bot)
    assert reply.message is not None and reply.message.reply_to_message is not None
    assert reply.message.reply_to_message.from_user is not None
    assert reply.message.reply_to_message.from_user.id == ALICE.id


def test_user_messages_share_the_chat_message_id_sequence(
    fake: FakeTelegram, users: UpdateFactory
) -> None:
    first = users.text(group(GROUP_ID), ALICE, "a")["message"]["message_id"]
    assert fake.next_message_id(GROUP_ID) == first + 1
    assert users.text(group(GROUP_ID), ALICE, "b")["message"]["message_id"] == first + 2


def test_group_helper_picks_the_chat_type_from_the_id() -> None:
    assert group(-1001234567890)["type"] == "supergroup"
    assert group(-4001)["type"] == "group"
    with pytest.raises(ValueError):
        group(5)
    assert private(ALICE) == {
        "id": ALICE.id,
        "type": "private",
        "first_name": "Alice",
        "username": "alice",
    }


@needs_spec
async def test_factory_updates_match_the_spec(fake: FakeTelegram, bot: Bot) -> None:
    users = UpdateFactory(fake)
    await bot.send_message(GROUP_ID, "<i>x</i>", parse_mode="HTML", reply_markup=keyboard("Go"))
    table = group(GROUP_ID)
    updates = [
        users.command(table, ALICE, "/new", "x"),
        users.text(table, ALICE, "hello /new"),
        users.start_private(BOB, "p"),
        users.press(fake, ALICE, GROUP_ID, "Go"),
        users.my_chat_member(table, ALICE, "member", "administrator"),
        users.chat_member(table, BOB, "member", "kicked"),
        users.chat_member(table, BOB, "kicked", "restricted"),
        users.chat_member(table, BOB, "restricted", "creator"),
        users.left_chat_member(table, ALICE),
        users.new_chat_members(table, [ALICE]),
        users.migrate(-4001, -1009999999999),
    ]
    assert SPEC is not None
    for update in updates:
        assert SPEC.check_object(update, "Update") == [], update


# ---------------------------------------------------------------------------------------------
# Without api.json
# ---------------------------------------------------------------------------------------------


def test_missing_spec_warns_and_is_reported_as_none(tmp_path: Path) -> None:
    with pytest.warns(SpecMissingWarning, match="skips the method/field/type checks"):
        assert load_spec(tmp_path / "api.json") is None


async def test_without_spec_only_the_prose_limits_are_checked() -> None:
    fake = FakeTelegram(spec=None)
    async with Bot(TOKEN, request=fake, get_updates_request=fake) as bot:
        await bot.send_message(GROUP_ID, "x", api_kwargs={"colour": "red"})  # not checkable
        with pytest.raises(BadRequest, match=r"(?i)too long"):
            await bot.send_message(GROUP_ID, "x" * 4097)
        with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
            await bot.send_message(
                GROUP_ID,
                "x",
                reply_markup=InlineKeyboardMarkup(
                    [[InlineKeyboardButton("a", callback_data="d" * 65)]]
                ),
            )
    assert len(fake.violations) == 2


def test_spec_path_can_be_overridden(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tests.support import fake_telegram

    spec_file = tmp_path / "api.json"
    spec_file.write_text(json.dumps({"methods": {"getMe": {"fields": []}}, "types": {}}))
    monkeypatch.setenv("BOTAPI_JSON", str(spec_file))
    assert fake_telegram.default_spec_path() == spec_file
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = load_spec()
    assert spec is not None and spec.check_call("sendMessage", {}) == [
        "unknown method 'sendMessage'"
    ]


# ---------------------------------------------------------------------------------------------
# End to end with an Application
# ---------------------------------------------------------------------------------------------


async def test_real_polling_picks_up_pushed_updates(fake: FakeTelegram) -> None:
    seen: list[str] = []
    done = asyncio.Event()

    async def on_new(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None and update.message.text is not None
        seen.append(update.message.text)
        done.set()

    app = ApplicationBuilder().token(TOKEN).request(fake).get_updates_request(fake).build()
    app.add_handler(CommandHandler("new", on_new))
    users = UpdateFactory(fake)
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0)
        fake.push_update(users.command(group(GROUP_ID), ALICE, "/new"))
        await asyncio.wait_for(done.wait(), timeout=5)
        await app.updater.stop()
        await app.stop()
    assert seen == ["/new"]
    assert fake.calls_to("deleteWebhook")  # start_polling makes sure no webhook is set
    # An idle poller waits between empty answers instead of hammering getUpdates.
    assert len(fake.calls_to("getUpdates")) < 50


async def test_application_handlers_run_against_the_fake(fake: FakeTelegram) -> None:
    async def new_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None
        await context.bot.send_message(
            update.effective_chat.id,
            f"Game by <b>{html.escape(update.effective_user.first_name)}</b>",  # type: ignore[union-attr]
            parse_mode=ParseMode.HTML,
            reply_markup=keyboard("Join"),
        )

    async def join(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None
        await query.answer("Joined")
        await query.edit_message_text(
            f"Players: {query.from_user.first_name}", reply_markup=keyboard("Join", "Start")
        )

    app = ApplicationBuilder().token(TOKEN).request(fake).get_updates_request(fake).build()
    app.add_handler(CommandHandler("new", new_game))
    app.add_handler(CallbackQueryHandler(join, pattern="^join$"))
    users = UpdateFactory(fake)
    table = group(GROUP_ID, "Cheat table")
    async with app:
        await app.process_update(
            Update.de_json(users.command(table, ALICE, "/new@tgcheat_bot"), app.bot)
        )
        assert fake.last_message(GROUP_ID).plain_text == "Game by Alice"
        await app.process_update(Update.de_json(users.press(fake, BOB, GROUP_ID, "Join"), app.bot))
    lobby = fake.last_message(GROUP_ID)
    assert lobby.plain_text == "Players: Bob"
    assert [b["text"] for b in lobby.buttons] == ["Join", "Start"]
    assert len(lobby.history) == 2
    assert [answer.get("text") for answer in fake.callback_answers.values()] == ["Joined"]
    fake.assert_clean()
