"""An offline Telegram Bot API for tests.

``FakeTelegram`` is a ``telegram.request.BaseRequest``: python-telegram-bot hands it every HTTP
request it would send to Telegram, and it answers the way the real Bot API does, with real JSON
shapes and real error codes.  On the way it

* records every call (``fake.calls``),
* checks every request against the machine-readable Bot API spec (``api.json``) and against the
  limits Telegram states only in prose (text length, callback_data bytes, HTML syntax, ...),
* keeps the state of every message the bot sent, so edits and deletes behave like Telegram's
  (``message is not modified``, ``message to edit not found``, keyboards disappearing when an
  edit does not repeat them), and
* models the few pieces of chat state a group game bot runs into: users who never started the
  bot, users who blocked it, who is in a group (and who is an admin there), groups that kicked
  the bot or migrated to supergroups, and a reply to a message that is gone.

A test may make Telegram misbehave: ``fail_next`` (the next call of a method fails),
``fail_always`` (every call that matches fails, e.g. a poison update's reply), ``flood`` (a chat
answers 429 "retry after N" until its wait is over) and ``stall`` (a chat's requests wait until
the test lets them go); ``limits`` (``tests.support.rate_limits.TelegramLimits``, off unless
given) answers 429 beyond Telegram's flood limits, per chat and across all chats, on the fake's
clock; ``hang_next`` keeps the next matching request unanswered (a process that died while
waiting for Telegram); ``wait_for_call`` waits until a matching call was answered.

Anything the bot does that Telegram would refuse becomes a *violation*: it is listed in
``fake.violations`` and answered with the HTTP 400 Telegram would give, so the bot's own error
handling runs as in production.  ``fake.assert_clean()`` fails a test that produced any.

``FakeTelegram(checks=False)`` is the benchmarks' mode: it only answers.  No spec or limit
check, no HTML parsing, no record of calls or messages (``calls``, ``violations`` and
``messages`` stay empty, so that it does not grow over a long run), and the parameters are
read as python-telegram-bot's HTTPXRequest sends them, without decoding.  The answers keep
Telegram's shapes: a sent or edited message comes back with its chat, sender, text (as sent:
its HTML is not parsed into entities) and keyboard; message ids still count per chat,
``fail_next`` still applies.  What it costs is about what the bot's side of a real HTTP request
costs, minus the network, so that a benchmark counts the bot's own work.  It answers getMe,
sendMessage, editMessageText, editMessageReplyMarkup and getChatMember (where everyone is
in every group, as no update tells it otherwise); any other method answers ``true``.

In both modes ``record`` (a ``Recorder``) is told of every request: its method, the kind of
chat it goes to and whether it shows a pop-up, which is all a benchmark counts.

Usage::

    fake = FakeTelegram()
    app = ApplicationBuilder().token(TOKEN).request(fake).get_updates_request(fake).build()
    # or: bot = Bot(TOKEN, request=fake, get_updates_request=fake)
"""

from __future__ import annotations

import asyncio
import copy
import difflib
import itertools
import json
import os
import re
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
from telegram.request import BaseRequest, RequestData

from tests.support.rate_limits import Refused, TelegramLimits

JsonDict = dict[str, Any]

# ---------------------------------------------------------------------------------------------
# The Bot API spec
# ---------------------------------------------------------------------------------------------

_PRIMITIVE_KINDS = {"Integer", "Float", "String", "Boolean"}
# Subtypes of union types (ChatMember, BotCommandScope, ...) name their tag in prose:
# 'Scope type, must be chat' or 'The member's status in the chat, always "creator"'.
_TAG_VALUE = re.compile(r'(?:always|must be)\s+["\u201c]?([A-Za-z0-9_\-]+)')
_TAG_FIELDS = ("type", "status", "source")


class SpecMissingWarning(UserWarning):
    """api.json was not found: requests are checked against Telegram's limits only."""


class UploadedFile(str):
    """Stands in for a multipart file upload in recorded params (uploads are not modelled)."""

    __slots__ = ()


class BotApiSpec:
    """The Bot API as described by ``api.json``, with a JSON-schema-like checker."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.version: str = str(data.get("version", "unknown"))
        self.methods: dict[str, JsonDict] = dict(data["methods"])
        self.types: dict[str, JsonDict] = dict(data["types"])
        # Telegram treats method names case-insensitively ("sendmessage" works).
        self._method_by_lower = {name.lower(): name for name in self.methods}

    # -- lookups ------------------------------------------------------------------------------

    def canonical_method(self, method: str) -> str | None:
        return self._method_by_lower.get(method.lower())

    def method_fields(self, method: str) -> dict[str, JsonDict]:
        name = self.canonical_method(method)
        if name is None:
            return {}
        return {f["name"]: f for f in self.methods[name].get("fields", [])}

    def type_fields(self, type_name: str) -> dict[str, JsonDict]:
        return {f["name"]: f for f in self.types.get(type_name, {}).get("fields", [])}

    def returns(self, method: str) -> list[str]:
        name = self.canonical_method(method)
        return list(self.methods[name].get("returns", [])) if name else []

    def tag(self, type_name: str) -> tuple[str, str] | None:
        """The (field, value) that identifies a subtype of a union, e.g. ('type', 'chat')."""
        spec_type = self.types.get(type_name, {})
        if "subtype_of" not in spec_type:
            return None
        for f in spec_type.get("fields", []):
            if f["name"] in _TAG_FIELDS and f["required"]:
                match = _TAG_VALUE.search(f.get("description", ""))
                if match:
                    return f["name"], match.group(1)
        return None

    # -- checks -------------------------------------------------------------------------------

    def check_call(self, method: str, params: Mapping[str, Any]) -> list[str]:
        """Problems with a method call: unknown method, missing/unknown fields, wrong types."""
        name = self.canonical_method(method)
        if name is None:
            close = difflib.get_close_matches(method, list(self.methods), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return [f"unknown method {method!r}{hint}"]
        fields = self.method_fields(name)
        return self._check_fields(params, fields, where="", owner=f"method {name}")

    def check_object(self, obj: Any, type_name: str, where: str = "") -> list[str]:
        """Problems with ``obj`` as a value of the Bot API type ``type_name``."""
        return self.check_value(obj, [type_name], where or type_name)

    def check_value(self, value: Any, types: list[str], where: str) -> list[str]:
        """Problems with ``value`` as one of ``types`` (as written in the spec)."""
        candidates: list[list[str]] = []
        for type_name in types:
            if not self._kind_fits(value, type_name):
                continue
            problems = self._check_as(value, type_name, where)
            if not problems:
                return []
            candidates.append(problems)
        if not candidates:
            return [f"{where}: expected {' or '.join(types)}, got {_describe(value)}"]
        # Report against the type the value most nearly is: that is the one the author meant.
        return min(candidates, key=len)

    def _kind_fits(self, value: Any, type_name: str) -> bool:
        if type_name.startswith("Array of "):
            return isinstance(value, list)
        if type_name == "Integer":
            return isinstance(value, int) and not isinstance(value, bool)
        if type_name == "Float":
            return isinstance(value, int | float) and not isinstance(value, bool)
        if type_name == "String":
            return isinstance(value, str) and not isinstance(value, UploadedFile)
        if type_name == "Boolean":
            return isinstance(value, bool)
        if type_name == "InputFile":
            return isinstance(value, UploadedFile)
        spec_type = self.types.get(type_name)
        if spec_type is None:
            return True  # a type the spec does not describe: nothing to hold it to
        if "subtypes" in spec_type:
            return any(self._kind_fits(value, sub) for sub in spec_type["subtypes"])
        return isinstance(value, dict)

    def _check_as(self, value: Any, type_name: str, where: str) -> list[str]:
        if type_name.startswith("Array of "):
            inner = type_name.removeprefix("Array of ")
            problems: list[str] = []
            for index, item in enumerate(value):
                problems += self.check_value(item, [inner], f"{where}[{index}]")
            return problems
        spec_type = self.types.get(type_name)
        if type_name in _PRIMITIVE_KINDS or type_name == "InputFile" or spec_type is None:
            return []
        if "subtypes" in spec_type:
            return self._check_union(value, type_name, spec_type["subtypes"], where)
        fields = self.type_fields(type_name)
        if not fields:
            return []  # e.g. CallbackGame: "a placeholder, currently holds no information"
        problems = self._check_fields(value, fields, where=where, owner=type_name)
        tag = self.tag(type_name)
        if tag and tag[0] in value and value[tag[0]] != tag[1]:
            problems.append(f"{where}.{tag[0]}: must be {tag[1]!r} for {type_name}")
        return problems

    def _check_union(self, value: Any, union: str, subtypes: list[str], where: str) -> list[str]:
        tags = {sub: self.tag(sub) for sub in subtypes}
        if isinstance(value, dict) and all(tags.values()):
            tag_field = next(iter(tags.values()))[0]  # type: ignore[index]
            tagged = [sub for sub, tag in tags.items() if tag and value.get(tag_field) == tag[1]]
            if not tagged:
                allowed = ", ".join(repr(tag[1]) for tag in tags.values() if tag)
                got = value.get(tag_field, "<missing>")
                return [f"{where}.{tag_field}: {got!r} is not a {union} (one of {allowed})"]
            return self.check_value(value, tagged, where)
        return self.check_value(value, subtypes, where)

    def _check_fields(
        self, obj: Mapping[str, Any], fields: dict[str, JsonDict], *, where: str, owner: str
    ) -> list[str]:
        problems: list[str] = []
        for name, spec_field in fields.items():
            if spec_field["required"] and name not in obj:
                problems.append(f"{_join(where, name)}: required field missing ({owner})")
        for key, value in obj.items():
            declared = fields.get(key)
            if declared is None:
                close = difflib.get_close_matches(key, list(fields), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                problems.append(f"{_join(where, key)}: unknown field, not in {owner}{hint}")
                continue
            problems += self.check_value(value, declared["types"], _join(where, key))
        return problems


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, UploadedFile):
        return "an uploaded file"
    if isinstance(value, str):
        return f"String {value!r}" if len(value) < 40 else "a long String"
    kinds = {bool: "Boolean", int: "Integer", float: "Float"}
    for python_type, kind in kinds.items():
        if type(value) is python_type:
            return f"{kind} {value!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def default_spec_path() -> Path:
    """``$BOTAPI_JSON`` or ``<repo>/../shared/botapi/api.json``."""
    override = os.environ.get("BOTAPI_JSON")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2].parent / "shared" / "botapi" / "api.json"


def load_spec(path: Path | None = None) -> BotApiSpec | None:
    """Load api.json; warn (once per call) and return None when it is not there."""
    path = path or default_spec_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        warnings.warn(
            f"Bot API spec not found at {path}: FakeTelegram checks Telegram's limits but "
            "skips the method/field/type checks (set BOTAPI_JSON to point at api.json)",
            SpecMissingWarning,
            stacklevel=2,
        )
        return None
    return BotApiSpec(data)


SPEC: BotApiSpec | None = load_spec()
SPEC_AVAILABLE: bool = SPEC is not None

# ---------------------------------------------------------------------------------------------
# Telegram's HTML
# ---------------------------------------------------------------------------------------------

# Tag -> entity type for the tags that only style text; these nest freely (except in code/pre).
_STYLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
}
# "All other entities can't contain each other" (Bot API, formatting options).
_EXCLUSIVE_TAGS = {"a", "code", "pre", "tg-emoji", "tg-time"}
_SUPPORTED_TAGS = set(_STYLE_TAGS) | _EXCLUSIVE_TAGS | {"blockquote"}
_HTML_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot)|#([0-9]{1,8})|#[xX]([0-9a-fA-F]{1,8}));")
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ANY_ENTITY_LOOKALIKE = re.compile(r"&#?[A-Za-z0-9]{1,32};")
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z0-9_\-]+")


@dataclass
class ParsedText:
    """Text as Telegram stores it: plain text plus entities (offsets in UTF-16 code units)."""

    text: str
    entities: list[JsonDict]
    problems: list[str] = field(default_factory=list)


@dataclass
class _OpenTag:
    name: str
    attributes: dict[str, str]
    start: int  # UTF-16 offset in the plain text
    byte_offset: int


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _byte_offset(source: str, index: int) -> int:
    return len(source[:index].encode("utf-8"))


def parse_telegram_html(source: str) -> ParsedText:
    """Parse ``source`` the way Telegram parses parse_mode=HTML.

    Returns the plain text, the entities Telegram would create, and every problem that makes
    Telegram (or its documented rules) reject the text.  Problems use the wording of Telegram's
    "can't parse entities" errors where there is one.  The checker is a little stricter than
    Telegram's parser where the documentation is: a bare ``>`` or ``&`` must be escaped.
    """
    out: list[str] = []
    utf16_pos = 0
    stack: list[_OpenTag] = []
    entities: list[JsonDict] = []
    problems: list[str] = []
    skipped_end_tags: list[str] = []  # end tags of unsupported start tags already reported
    i = 0
    length = len(source)

    def emit(chunk: str) -> None:
        nonlocal utf16_pos
        out.append(chunk)
        utf16_pos += _utf16_len(chunk)

    while i < length:
        char = source[i]
        if char == "&":
            decoded, i = _decode_entity(source, i, problems)
            emit(decoded)
            continue
        if char == ">":
            problems.append(f"Unescaped '>' at byte offset {_byte_offset(source, i)}: write &gt;")
            emit(">")
            i += 1
            continue
        if char != "<":
            # Copy the run of ordinary characters in one go.
            j = i
            while j < length and source[j] not in "<>&":
                j += 1
            emit(source[i:j])
            i = j
            continue
        if source.startswith("</", i):
            i = _close_tag(source, i, stack, entities, problems, skipped_end_tags, utf16_pos)
            continue
        i = _open_tag(source, i, stack, problems, skipped_end_tags, utf16_pos, emit)

    for tag in stack:
        problems.append(f'Can\'t find end tag corresponding to start tag "{tag.name}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return ParsedText("".join(out), entities, problems)


def check_telegram_html(text: str) -> list[str]:
    """Problems that make Telegram reject ``text`` with parse_mode=HTML (empty when fine)."""
    return parse_telegram_html(text).problems


def _decode_entity(source: str, i: int, problems: list[str]) -> tuple[str, int]:
    match = _HTML_ENTITY.match(source, i)
    if match is None:
        lookalike = _ANY_ENTITY_LOOKALIKE.match(source, i)
        where = f"at byte offset {_byte_offset(source, i)}"
        if lookalike:
            problems.append(
                f"Unsupported HTML entity {lookalike.group()!r} {where}: only &lt; &gt; "
                "&amp; &quot; and numeric entities are supported"
            )
        else:
            problems.append(f"Unescaped '&' {where}: write &amp;")
        return "&", i + 1
    named, decimal, hexadecimal = match.groups()
    if named:
        return _NAMED_ENTITIES[named], match.end()
    code_point = int(decimal, 10) if decimal else int(hexadecimal, 16)
    if code_point == 0 or code_point > 0x10FFFF or 0xD800 <= code_point <= 0xDFFF:
        problems.append(
            f"Invalid numeric entity {match.group()!r} at byte offset {_byte_offset(source, i)}"
        )
        return "", match.end()
    return chr(code_point), match.end()


def _close_tag(
    source: str,
    i: int,
    stack: list[_OpenTag],
    entities: list[JsonDict],
    problems: list[str],
    skipped_end_tags: list[str],
    utf16_pos: int,
) -> int:
    end = source.find(">", i)
    if end == -1:
        problems.append(f"Unclosed end tag at byte offset {_byte_offset(source, i)}")
        return len(source)
    name = source[i + 2 : end].strip().lower()
    if not stack or stack[-1].name != name:
        if name in skipped_end_tags:
            skipped_end_tags.remove(name)
        elif not stack:
            problems.append(f"Unexpected end tag at byte offset {_byte_offset(source, i)}")
        else:
            problems.append(
                f"Unmatched end tag at byte offset {_byte_offset(source, i)}, expected "
                f'"</{stack[-1].name}>", found "</{name}>"'
            )
            if any(tag.name == name for tag in stack):
                # Recover the way a reader would: close the tags that were left open.
                while stack[-1].name != name:
                    stack.pop()
                stack.pop()
        return end + 1
    tag = stack.pop()
    entity = _entity_for(tag, stack, utf16_pos)
    if entity is not None and entity["length"] > 0:
        entities.append(entity)
    return end + 1


def _entity_for(tag: _OpenTag, parents: list[_OpenTag], end: int) -> JsonDict | None:
    entity: JsonDict = {"offset": tag.start, "length": end - tag.start}
    if tag.name in _STYLE_TAGS:
        entity["type"] = _STYLE_TAGS[tag.name]
    elif tag.name == "a":
        entity.update(type="text_link", url=tag.attributes.get("href", ""))
    elif tag.name == "code":
        if parents and parents[-1].name == "pre":
            # <pre><code class="language-x"> is one pre entity with a language.
            language = tag.attributes.get("class", "").removeprefix("language-")
            if language:
                parents[-1].attributes["language"] = language
            return None
        entity["type"] = "code"
    elif tag.name == "pre":
        entity["type"] = "pre"
        if tag.attributes.get("language"):
            entity["language"] = tag.attributes["language"]
    elif tag.name == "blockquote":
        expandable = "expandable" in tag.attributes
        entity["type"] = "expandable_blockquote" if expandable else "blockquote"
    elif tag.name == "tg-emoji":
        entity.update(type="custom_emoji", custom_emoji_id=tag.attributes.get("emoji-id", ""))
    elif tag.name == "tg-time":
        entity["type"] = "date_time"
        unix = tag.attributes.get("unix", "")
        if unix.isdigit():
            entity["unix_time"] = int(unix)
        if tag.attributes.get("format"):
            entity["date_time_format"] = tag.attributes["format"]
    return entity


def _open_tag(
    source: str,
    i: int,
    stack: list[_OpenTag],
    problems: list[str],
    skipped_end_tags: list[str],
    utf16_pos: int,
    emit: Callable[[str], None],
) -> int:
    offset = _byte_offset(source, i)
    j = i + 1
    while j < len(source) and not source[j].isspace() and source[j] not in "<>/":
        j += 1
    name = source[i + 1 : j].lower()
    if j >= len(source):
        problems.append(f"Unclosed start tag at byte offset {offset}")
        emit("<")
        return i + 1
    if name not in _SUPPORTED_TAGS:
        problems.append(
            f'Unsupported start tag "{name}" at byte offset {offset}'
            + ("" if name else ": write a literal '<' as &lt;")
        )
        tag_end = source.find(">", j)
        next_open = source.find("<", j)
        if name and tag_end != -1 and (next_open == -1 or tag_end < next_open):
            skipped_end_tags.append(name)
            return tag_end + 1  # skip the whole unsupported tag, its end tag is ignored too
        emit("<")
        return i + 1
    attributes, end = _parse_attributes(source, j, name, offset, problems)
    if end is None:
        problems.append(f'Unclosed start tag "{name}" at byte offset {offset}')
        return len(source)
    tag = _OpenTag(name, attributes, utf16_pos, offset)
    problems += _tag_problems(tag, stack)
    stack.append(tag)
    return end


def _parse_attributes(
    source: str, j: int, tag: str, offset: int, problems: list[str]
) -> tuple[dict[str, str], int | None]:
    """Attributes of a start tag from ``j``; returns them and the index after the '>'."""
    attributes: dict[str, str] = {}
    length = len(source)
    while True:
        while j < length and source[j].isspace():
            j += 1
        if j >= length:
            return attributes, None
        if source[j] == ">":
            return attributes, j + 1
        if source.startswith("/>", j):
            problems.append(f'Self-closing tag "{tag}" at byte offset {offset} is not supported')
            return attributes, j + 2
        name_match = _ATTRIBUTE_NAME.match(source, j)
        if name_match is None:
            problems.append(f'Empty attribute name in the tag "{tag}" at byte offset {offset}')
            end = source.find(">", j)
            return attributes, None if end == -1 else end + 1
        attribute = name_match.group().lower()
        j = name_match.end()
        while j < length and source[j].isspace():
            j += 1
        if j >= length or source[j] != "=":
            attributes[attribute] = ""  # a bare attribute, e.g. <blockquote expandable>
            continue
        j += 1
        while j < length and source[j].isspace():
            j += 1
        if j >= length:
            return attributes, None
        if source[j] in "\"'":
            quote = source[j]
            close = source.find(quote, j + 1)
            if close == -1:
                return attributes, None
            raw_value, j = source[j + 1 : close], close + 1
        else:
            k = j
            while k < length and not source[k].isspace() and source[k] != ">":
                k += 1
            raw_value, j = source[j:k], k
        attributes[attribute] = _decode_attribute(raw_value, problems)


def _decode_attribute(raw: str, problems: list[str]) -> str:
    decoded: list[str] = []
    i = 0
    while i < len(raw):
        if raw[i] == "&":
            chunk, i = _decode_entity(raw, i, problems)
            decoded.append(chunk)
        else:
            decoded.append(raw[i])
            i += 1
    return "".join(decoded)


def _tag_problems(tag: _OpenTag, stack: list[_OpenTag]) -> list[str]:
    problems: list[str] = []
    where = f"at byte offset {tag.byte_offset}"
    if tag.name == "span" and tag.attributes.get("class") != "tg-spoiler":
        problems.append(f'Tag "span" must have class "tg-spoiler" {where}')
    if tag.name == "a" and not tag.attributes.get("href"):
        problems.append(f'Tag "a" needs an href attribute {where}')
    if tag.name == "tg-emoji" and not tag.attributes.get("emoji-id"):
        problems.append(f'Tag "tg-emoji" must have attribute "emoji-id" {where}')
    if tag.name == "tg-time" and not tag.attributes.get("unix", "").isdigit():
        problems.append(f'Tag "tg-time" must have a numeric attribute "unix" {where}')
    names = [open_tag.name for open_tag in stack]
    code_in_pre = tag.name == "code" and names and names[-1] == "pre"
    inside_code = [name for name in names if name in ("code", "pre")]
    if inside_code and not code_in_pre:
        problems.append(
            f'Tag "{tag.name}" {where} is inside "{inside_code[-1]}": pre and code entities '
            "can't contain other entities"
        )
    elif tag.name == "blockquote" and "blockquote" in names:
        problems.append(f"Blockquote {where} is nested in a blockquote: not allowed")
    elif tag.name in _EXCLUSIVE_TAGS and not code_in_pre:
        outer = [name for name in names if name in _EXCLUSIVE_TAGS]
        if outer:
            problems.append(
                f'Tag "{tag.name}" {where} is inside "{outer[-1]}": links, code, pre, custom '
                "emoji and times can't contain each other"
            )
    return problems


# ---------------------------------------------------------------------------------------------
# Limits the spec states only in prose
# ---------------------------------------------------------------------------------------------

MAX_TEXT_LENGTH = 4096
MAX_CAPTION_LENGTH = 1024
MAX_CALLBACK_ANSWER_LENGTH = 200
MAX_CALLBACK_DATA_BYTES = 64
MAX_INLINE_BUTTONS = 100
MAX_BOT_COMMANDS = 100
_PARSE_MODES = {"html", "markdown", "markdownv2"}
_DEEP_LINK_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{0,64}")
_BOT_COMMAND = re.compile(r"[a-z0-9_]{1,32}")
_TELEGRAM_LINK_HOSTS = {"t.me", "telegram.me", "telegram.dog"}
# InlineKeyboardButton fields that are not its action (Bot API: "exactly one of the fields
# other than text, icon_custom_emoji_id, and style must be used").
_BUTTON_DECORATION = {"text", "icon_custom_emoji_id", "style"}
_BUTTON_ACTIONS_FALLBACK = (
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)
_TEXT_METHODS = {"sendmessage", "editmessagetext"}


def button_action_fields(spec: BotApiSpec | None = SPEC) -> tuple[str, ...]:
    if spec is None or "InlineKeyboardButton" not in spec.types:
        return _BUTTON_ACTIONS_FALLBACK
    fields = spec.type_fields("InlineKeyboardButton")
    return tuple(name for name in fields if name not in _BUTTON_DECORATION)


def render_text(
    text: str, parse_mode: str | None = None, entities: list[JsonDict] | None = None
) -> ParsedText:
    """What Telegram makes of a text parameter: plain text, entities and parse problems.

    Like Telegram, leading and trailing whitespace is trimmed.  Markdown modes are not parsed
    (the text is taken as plain); tgcheat uses HTML.
    """
    if parse_mode is not None and parse_mode.lower() == "html":
        parsed = parse_telegram_html(text)
    else:
        parsed = ParsedText(text, [dict(e) for e in entities or [] if isinstance(e, dict)])
    return _trim(parsed)


def _trim(parsed: ParsedText) -> ParsedText:
    text = parsed.text
    stripped = text.strip()
    if stripped == text:
        return parsed
    lead = _utf16_len(text[: len(text) - len(text.lstrip())])
    end = lead + _utf16_len(stripped)
    entities = []
    for entity in parsed.entities:
        start = max(entity["offset"], lead)
        stop = min(entity["offset"] + entity["length"], end)
        if stop > start:
            entities.append({**entity, "offset": start - lead, "length": stop - start})
    return ParsedText(stripped, entities, parsed.problems)


def check_deep_link(url: str, where: str = "url") -> list[str]:
    """Problems with a t.me / tg://resolve link's start or startgroup payload."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [f"{where}: not a valid URL: {url!r}"]
    is_tme = parts.scheme in ("http", "https") and parts.hostname in _TELEGRAM_LINK_HOSTS
    is_tg = parts.scheme == "tg" and parts.netloc == "resolve"
    if not (is_tme or is_tg):
        return []
    problems = []
    query = parse_qs(parts.query, keep_blank_values=True)
    for key in ("start", "startgroup"):
        for payload in query.get(key, []):
            if not _DEEP_LINK_PAYLOAD.fullmatch(payload):
                problems.append(
                    f"{where}: deep-link {key} payload {payload!r} must be at most 64 "
                    "characters of A-Z, a-z, 0-9, _ and -"
                )
    return problems


def check_reply_markup(
    markup: Any, where: str = "reply_markup", spec: BotApiSpec | None = SPEC
) -> list[str]:
    """Inline keyboard limits: button count, labels, one action per button, callback_data."""
    if not isinstance(markup, dict) or not isinstance(markup.get("inline_keyboard"), list):
        return []
    rows = markup["inline_keyboard"]
    problems: list[str] = []
    buttons = [
        (r, c, button)
        for r, row in enumerate(rows)
        if isinstance(row, list)
        for c, button in enumerate(row)
        if isinstance(button, dict)
    ]
    if len(buttons) > MAX_INLINE_BUTTONS:
        problems.append(
            f"{where}: {len(buttons)} inline buttons, Telegram allows at most "
            f"{MAX_INLINE_BUTTONS} (REPLY_MARKUP_TOO_LONG)"
        )
    actions = button_action_fields(spec)
    for r, c, button in buttons:
        at = f"{where}.inline_keyboard[{r}][{c}]"
        label = button.get("text")
        if not isinstance(label, str) or not label.strip():
            problems.append(f"{at}.text: button text must be non-empty")
        used = [name for name in actions if name in button]
        if not used:
            problems.append(
                f"{at}: button {label!r} has no action; it needs exactly one of "
                f"{', '.join(actions)} (text buttons are unallowed in the inline keyboard)"
            )
        elif len(used) > 1:
            problems.append(
                f"{at}: button {label!r} has {len(used)} actions ({', '.join(used)}); "
                "exactly one is allowed"
            )
        data = button.get("callback_data")
        if isinstance(data, str):
            size = len(data.encode("utf-8"))
            if not 1 <= size <= MAX_CALLBACK_DATA_BYTES:
                problems.append(
                    f"{at}.callback_data: {size} bytes, must be 1-{MAX_CALLBACK_DATA_BYTES} "
                    f"bytes in UTF-8 (BUTTON_DATA_INVALID): {data!r}"
                )
        url = button.get("url")
        if isinstance(url, str):
            problems += check_deep_link(url, f"{at}.url")
    return problems


def check_limits(
    method: str, params: Mapping[str, Any], spec: BotApiSpec | None = SPEC
) -> list[str]:
    """Problems with the limits Telegram documents in prose (independent of api.json)."""
    lower = method.lower()
    problems: list[str] = []
    parse_mode = params.get("parse_mode")
    if isinstance(parse_mode, str) and parse_mode.lower() not in _PARSE_MODES:
        problems.append(f"parse_mode: unsupported parse mode {parse_mode!r}")
        parse_mode = None
    for name, limit in (("text", MAX_TEXT_LENGTH), ("caption", MAX_CAPTION_LENGTH)):
        value = params.get(name)
        if not isinstance(value, str) or (name == "text" and lower not in _TEXT_METHODS):
            continue
        entity_param = "entities" if name == "text" else "caption_entities"
        entities = params.get(entity_param)
        rendered = render_text(
            value,
            parse_mode if isinstance(parse_mode, str) else None,
            entities if isinstance(entities, list) else None,
        )
        problems += [f"{name}: can't parse entities: {p}" for p in rendered.problems]
        size = len(rendered.text)
        if name == "text" and size == 0:
            problems.append("text: message text is empty (after entity parsing and trimming)")
        if size > limit:
            problems.append(
                f"{name}: {size} characters after entity parsing, Telegram allows at most "
                f"{limit} (message is too long)"
            )
        for entity in rendered.entities:
            if entity.get("type") == "text_link":
                problems += check_deep_link(str(entity.get("url", "")), f"{name} link")
    if lower == "answercallbackquery":
        text = params.get("text")
        if isinstance(text, str) and len(text) > MAX_CALLBACK_ANSWER_LENGTH:
            problems.append(
                f"text: callback answer of {len(text)} characters, Telegram allows at most "
                f"{MAX_CALLBACK_ANSWER_LENGTH}"
            )
    if "reply_markup" in params:
        problems += check_reply_markup(params["reply_markup"], spec=spec)
    if lower == "setmycommands":
        problems += _check_commands(params.get("commands"))
    code = params.get("language_code")
    if lower in _LANGUAGE_CODE_METHODS and code and not _BOT_LANGUAGE_CODE.fullmatch(str(code)):
        # As the Bot API server checks it (tdlib's validate_bot_language_code).
        problems.append(f"language_code: {code!r} is not a two-letter ISO 639-1 code")
    if lower.startswith(("editmessage", "stopmessagelivelocation")) and (
        "inline_message_id" not in params
        and ("chat_id" not in params or "message_id" not in params)
    ):
        problems.append("either inline_message_id or both chat_id and message_id are required")
    return problems


#: Methods whose ``language_code`` names the users a setting is for: empty, or two lowercase
#: letters ("pt", never "pt-br" or "pt_BR"): "Invalid language code specified" otherwise.
_LANGUAGE_CODE_METHODS = frozenset(
    {
        "setmycommands",
        "getmycommands",
        "deletemycommands",
        "setmyname",
        "getmyname",
        "setmydescription",
        "getmydescription",
        "setmyshortdescription",
        "getmyshortdescription",
    }
)
_BOT_LANGUAGE_CODE = re.compile("[a-z]{2}")


def _check_commands(commands: Any) -> list[str]:
    if not isinstance(commands, list):
        return []
    problems = []
    if len(commands) > MAX_BOT_COMMANDS:
        problems.append(f"commands: {len(commands)} commands, at most {MAX_BOT_COMMANDS}")
    for index, command in enumerate(commands):
        if not isinstance(command, dict):
            continue
        name, description = command.get("command"), command.get("description")
        if isinstance(name, str) and not _BOT_COMMAND.fullmatch(name):
            problems.append(
                f"commands[{index}].command: {name!r} must be 1-32 lowercase English letters, "
                "digits and underscores (BOT_COMMAND_INVALID)"
            )
        if isinstance(description, str) and not 1 <= len(description) <= 256:
            problems.append(f"commands[{index}].description: must be 1-256 characters")
    return problems


def check_request(
    method: str, params: Mapping[str, Any], spec: BotApiSpec | None = SPEC
) -> list[str]:
    """Every problem Telegram would have with this request (empty when it is fine)."""
    problems = spec.check_call(method, params) if spec is not None else []
    if problems and spec is not None and spec.canonical_method(method) is None:
        return problems  # an unknown method has no limits to check
    return problems + check_limits(method, params, spec)


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


#: The isolates that keep each name's (and card's) direction to itself, and the marks that set
#: a line's direction (LRM, RLM): they draw nothing.
_DIRECTIONAL_ISOLATES = re.compile("[\u200e\u200f\u2066-\u2069]")


def seen(text: str | None) -> str:
    """A message's text as a reader sees it: the isolates that keep each name's direction to
    itself, and the marks that open an Arabic line right to left, draw nothing."""
    return _DIRECTIONAL_ISOLATES.sub("", text or "")


@dataclass
class ApiCall:
    """One request the bot made, with params decoded to plain Python/JSON values."""

    method: str
    params: JsonDict
    status: int = 200  # the HTTP status the fake answered with
    error: str | None = None  # Telegram's error description when status is not 200
    result: Any = None  # the "result" of a successful answer


@dataclass
class MessageVersion:
    """A message as it was after one send or edit."""

    method: str
    text: str | None  # text or caption exactly as the bot sent it (may contain HTML)
    parse_mode: str | None
    sent_entities: list[JsonDict] | None
    reply_markup: JsonDict | None  # decoded; None when the message has no inline keyboard
    plain_text: str | None  # what users see: after entity parsing and trimming
    entities: list[JsonDict]  # the entities Telegram created
    date: int

    def content(self) -> tuple[Any, ...]:
        """What Telegram compares to decide whether an edit changed anything."""
        return self.plain_text, self.entities, self.reply_markup


@dataclass
class MessageRecord:
    """A message the bot sent, with its current state and every earlier version."""

    chat: JsonDict
    message_id: int
    sender: JsonDict
    date: int
    kind: str  # "text", or the media kind ("photo", "document", ...) for other messages
    history: list[MessageVersion]
    media: JsonDict = field(default_factory=dict)  # extra Message fields for media kinds
    deleted: bool = False
    edit_date: int | None = None

    @property
    def chat_id(self) -> int:
        return int(self.chat["id"])

    @property
    def current(self) -> MessageVersion:
        return self.history[-1]

    @property
    def text(self) -> str | None:
        return self.current.text

    @property
    def plain_text(self) -> str | None:
        return self.current.plain_text

    @property
    def seen_text(self) -> str:
        """``plain_text`` as a reader sees it, without the directional isolates and marks
        (they draw nothing)."""
        return seen(self.current.plain_text)

    @property
    def parse_mode(self) -> str | None:
        return self.current.parse_mode

    @property
    def entities(self) -> list[JsonDict]:
        return self.current.entities

    @property
    def reply_markup(self) -> JsonDict | None:
        return self.current.reply_markup

    @property
    def buttons(self) -> list[JsonDict]:
        markup = self.reply_markup or {}
        return [button for row in markup.get("inline_keyboard", []) for button in row]

    def to_api_dict(self) -> JsonDict:
        """The Message object Telegram returns / includes in callback queries (a copy)."""
        message: JsonDict = {
            "message_id": self.message_id,
            "from": self.sender,
            "chat": self.chat,
            "date": self.date,
        }
        if self.edit_date is not None:
            message["edit_date"] = self.edit_date
        version = self.current
        if self.kind == "text":
            message["text"] = version.plain_text or ""
            if version.entities:
                message["entities"] = version.entities
        else:
            message.update(self.media)
            if version.plain_text:
                message["caption"] = version.plain_text
                if version.entities:
                    message["caption_entities"] = version.entities
        if version.reply_markup is not None:
            message["reply_markup"] = version.reply_markup
        # A copy, so tests that tweak an update cannot change the fake's record.
        return copy.deepcopy(message)


@dataclass
class HungCall:
    """A request kept unanswered (``FakeTelegram.hang_next``)."""

    matches: Callable[[str, JsonDict], bool]
    #: Set to the call when it arrives.
    arrived: asyncio.Future[ApiCall]
    released: asyncio.Event
    #: Answered 502 after this long unreleased (None: never).
    timeout_s: float | None = None


@dataclass
class InjectedFailure:
    status: int
    description: str
    parameters: JsonDict | None = None


class ApiError(Exception):
    """An error answer; raised inside method handlers, turned into Telegram's error JSON."""

    def __init__(self, status: int, description: str, parameters: JsonDict | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


# ---------------------------------------------------------------------------------------------
# JSON builders shared with tests.support.updates
# ---------------------------------------------------------------------------------------------

BOT_ID = 7000000001
DEFAULT_BOT_USERNAME = "tgcheat_bot"
_SUPERGROUP_ID_LIMIT = -1_000_000_000_000  # supergroup ids look like -100xxxxxxxxxx


def chat_type_for_id(chat_id: int) -> str:
    if chat_id > 0:
        return "private"
    return "supergroup" if chat_id <= _SUPERGROUP_ID_LIMIT else "group"


def chat_kind(chat_id: object) -> str:
    """The kind of chat a request goes to: "group", "private", or "none" when it names no chat
    (answerCallbackQuery); from its chat_id, decoded or as sent (a string: a number, or a
    group's @username)."""
    if isinstance(chat_id, int) and not isinstance(chat_id, bool):
        return "group" if chat_id < 0 else "private"
    if isinstance(chat_id, str) and chat_id:
        return "group" if chat_id.startswith(("-", "@")) else "private"
    return "none"


#: ``record(method, chat, toast)``, told of every request: the method's name in lower case,
#: ``chat_kind`` of its chat_id, and whether it is a callback answer that shows a text.
Recorder = Callable[[str, str, bool], None]


_ADMIN_RIGHTS = (
    "can_manage_chat",
    "can_delete_messages",
    "can_manage_video_chats",
    "can_restrict_members",
    "can_promote_members",
    "can_change_info",
    "can_invite_users",
    "can_post_stories",
    "can_edit_stories",
    "can_delete_stories",
    "can_pin_messages",
    "can_manage_topics",
)
_RESTRICTED_PERMISSIONS = (
    "can_send_messages",
    "can_send_audios",
    "can_send_documents",
    "can_send_photos",
    "can_send_videos",
    "can_send_video_notes",
    "can_send_voice_notes",
    "can_send_polls",
    "can_send_other_messages",
    "can_add_web_page_previews",
    "can_react_to_messages",
    "can_edit_tag",
    "can_change_info",
    "can_invite_users",
    "can_pin_messages",
    "can_manage_topics",
)
CHAT_MEMBER_STATUSES = ("creator", "administrator", "member", "restricted", "left", "kicked")


def chat_member_dict(user: Mapping[str, Any], status: str) -> JsonDict:
    """A ChatMember object of the given status with every field Telegram always sends."""
    member: JsonDict = {"status": status, "user": dict(user)}
    if status == "creator":
        member["is_anonymous"] = False
    elif status == "administrator":
        member.update(can_be_edited=False, is_anonymous=False)
        member.update(dict.fromkeys(_ADMIN_RIGHTS, True))
    elif status == "restricted":
        member.update(is_member=True, until_date=0)
        member.update(dict.fromkeys(_RESTRICTED_PERMISSIONS, False))
    elif status == "kicked":
        member["until_date"] = 0
    elif status not in ("member", "left"):
        raise ValueError(f"unknown chat member status {status!r}; one of {CHAT_MEMBER_STATUSES}")
    return member


def _json_or_value(value: str) -> Any:
    """A parameter's JSON value; a string that is not JSON stays as it was sent, for the spec
    check to name."""
    try:
        return json.loads(value)
    except ValueError:
        return value


_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _int_or_none(value: str | None) -> int | None:
    """A numeric parameter as sent; None when absent or not a number (a @username)."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


_SEND_METHODS_WITHOUT_MESSAGE = {"sendchataction", "sendmediagroup", "sendgift", "sendmessagedraft"}
# Params PTB or a caller may hand over JSON-serialized; decoded when api.json is absent.
#: Without the spec, the parameters taken as strings whatever they look like (the rest are
#: read as JSON when they are JSON: numbers, booleans, objects, arrays).
_STRING_PARAMS = {
    "text",
    "caption",
    "callback_query_id",
    "parse_mode",
    "url",
    "description",
    "short_description",
    "name",
    "title",
    "language_code",
    "secret_token",
}


class FakeTelegram(BaseRequest):
    """An offline Bot API server; see the module docstring."""

    def __init__(
        self,
        *,
        username: str = DEFAULT_BOT_USERNAME,
        first_name: str = "tgcheat",
        bot_id: int = BOT_ID,
        spec: BotApiSpec | None = SPEC,
        clock: Callable[[], float] = time.time,
        poll_interval: float = 0.05,
        checks: bool = True,
        record: Recorder | None = None,
        limits: TelegramLimits | None = None,
    ) -> None:
        self.username = username
        self.first_name = first_name
        self.bot_id = bot_id
        self.spec = spec
        self.clock = clock
        self.poll_interval = poll_interval
        #: False: the benchmarks' mode, which only answers (see the module docstring).
        self.checks = checks
        self.record = record
        #: Telegram's flood limits, enforced on ``clock`` (None: no limit, as by default).
        self.limits = limits

        self.calls: list[ApiCall] = []
        self.violations: list[str] = []
        self.messages: dict[tuple[int, int], MessageRecord] = {}
        # Messages users sent (registered by UpdateFactory), so the bot may delete them.
        self.incoming: dict[tuple[int, int], JsonDict] = {}
        self.deleted_incoming: set[tuple[int, int]] = set()
        self.started_users: set[int] = set()
        self.blocked_users: set[int] = set()
        self.users: dict[int, JsonDict] = {}
        self.chats: dict[int, JsonDict] = {}
        self.member_status: dict[int, dict[int, str]] = {}
        self.kicked_from: set[int] = set()  # groups that removed the bot
        self.migrated: dict[int, int] = {}  # group id -> supergroup id
        self.callback_answers: dict[str, JsonDict] = {}
        #: Inline queries answered, and the inline messages prepared for the Mini App to share.
        self.inline_answers: dict[str, JsonDict] = {}
        self.prepared_messages: dict[str, JsonDict] = {}
        self.commands: dict[tuple[str, str], list[JsonDict]] = {}
        self.menu_buttons: dict[int | None, JsonDict] = {}
        self.webhook_url = ""
        self.pending_updates: list[JsonDict] = []
        self.initialized = False

        self._failures: dict[str, deque[InjectedFailure]] = {}
        self._standing_failures: list[tuple[Callable[[str, JsonDict], bool], InjectedFailure]] = []
        #: Chats in a flood wait, until when (the fake's clock, seconds).
        self._floods: dict[int, float] = {}
        #: Chats whose requests wait until the event is set.
        self._stalls: dict[int, asyncio.Event] = {}
        self._call_waiters: list[tuple[Callable[[ApiCall], bool], asyncio.Future[ApiCall]]] = []
        self._hangs: list[HungCall] = []
        self._message_ids: dict[int, Iterator[int]] = {}
        self._file_serial = itertools.count(1)

    # -- BaseRequest ----------------------------------------------------------------------------

    @property
    def read_timeout(self) -> float | None:
        return 5.0

    async def initialize(self) -> None:
        # Called twice when the same fake serves both request slots of a Bot: must be idempotent.
        self.initialized = True

    async def shutdown(self) -> None:
        self.initialized = False

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: object = BaseRequest.DEFAULT_NONE,
        write_timeout: object = BaseRequest.DEFAULT_NONE,
        connect_timeout: object = BaseRequest.DEFAULT_NONE,
        pool_timeout: object = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if not self.checks:
            return self._answer_unchecked(url, request_data)
        path = urlsplit(url).path
        if "/file/bot" in path:
            return self._answer_error(None, ApiError(404, "Not Found: files are not modelled"))
        # Only the last segment names the method: the base URL may be a local Bot API server.
        api_method = path.rstrip("/").rsplit("/", 1)[-1]
        params = self._decode_params(api_method, request_data)
        return await self._call(api_method, params)

    async def webhook_answer(self, status: int, content_type: str | None, body: bytes) -> None:
        """What Telegram does with the bot's answer to a webhook request: a JSON answer that
        names a ``method`` is one more Bot API call, checked like any other (the bot is never
        told how it went)."""
        if status != 200 or not body or not (content_type or "").startswith("application/json"):
            return
        params = json.loads(body)
        method = params.pop("method", None) if isinstance(params, dict) else None
        if not self.checks:
            if isinstance(method, str):
                self._record(method.lower(), params.get("chat_id"), params.get("text"))
            return
        if not isinstance(method, str):
            self.violations.append(f"webhook answer without a method: {body[:200]!r}")
            return
        await self._call(method, params)

    def _record(self, method: str, chat_id: object, text: object) -> None:
        if self.record is not None:
            self.record(method, chat_kind(chat_id), method == "answercallbackquery" and bool(text))

    async def _call(self, api_method: str, params: JsonDict) -> tuple[int, bytes]:
        call = ApiCall(api_method, params)
        self.calls.append(call)
        self._record(api_method.lower(), params.get("chat_id"), params.get("text"))

        problems = check_request(api_method, params, self.spec)
        self.violations += [f"{api_method}: {problem}" for problem in problems]

        hung = next((h for h in self._hangs if h.matches(api_method, params)), None)
        if hung is not None:
            self._hangs.remove(hung)
            hung.arrived.set_result(call)
            try:
                await asyncio.wait_for(hung.released.wait(), hung.timeout_s)
            except TimeoutError:
                # Answered at last, as a gateway gives up on a request.
                return self._answer_error(call, ApiError(502, "Bad Gateway"))
        chat_id = params.get("chat_id")
        stall = self._stalls.get(chat_id) if isinstance(chat_id, int) else None
        if stall is not None:
            await stall.wait()
        try:
            return await self._answer(call, api_method, params, problems)
        finally:
            self._tell_waiters(call)

    async def _answer(
        self, call: ApiCall, api_method: str, params: JsonDict, problems: list[str]
    ) -> tuple[int, bytes]:
        failures = self._failures.get(api_method.lower())
        if failures:
            failure = failures.popleft()
            error = ApiError(failure.status, failure.description, failure.parameters)
            return self._answer_error(call, error)
        for matches, failure in self._standing_failures:
            if matches(api_method, params):
                error = ApiError(failure.status, failure.description, failure.parameters)
                return self._answer_error(call, error)
        chat_id = params.get("chat_id")
        flood_ends = self._floods.get(chat_id) if isinstance(chat_id, int) else None
        if flood_ends is not None:
            left = flood_ends - self.clock()
            if left > 0:
                wait = max(1, int(left + 0.999))
                return self._answer_error(
                    call,
                    ApiError(429, f"Too Many Requests: retry after {wait}", {"retry_after": wait}),
                )
            del self._floods[chat_id]
        refused = self._beyond_limits(api_method, chat_id)
        if refused is not None:
            return self._answer_error(call, refused)
        if problems:
            if self.spec is not None and self.spec.canonical_method(api_method) is None:
                return self._answer_error(call, ApiError(404, "Not Found"))
            return self._answer_error(call, ApiError(400, f"Bad Request: {problems[0]}"))
        try:
            self._check_chat_access(api_method.lower(), params)
            if api_method.lower() == "getupdates":
                result = await self._get_updates(params)
            else:
                result = self._dispatch(api_method, params)
        except ApiError as error:
            return self._answer_error(call, error)
        call.result = result
        body = {"ok": True, "result": result}
        return 200, json.dumps(body, ensure_ascii=False).encode("utf-8")

    # -- test helpers ---------------------------------------------------------------------------

    @property
    def bot_user(self) -> JsonDict:
        """The bot as a User object (what getMe answers)."""
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    @property
    def bot_sender(self) -> JsonDict:
        """The bot as it appears in the "from" field of its messages."""
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }

    @property
    def errors(self) -> list[ApiCall]:
        """Calls that Telegram answered with an error."""
        return [call for call in self.calls if call.status != 200]

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method.lower() == method.lower()]

    def clear(self) -> None:
        """Forget the recorded calls (not the violations, nor the chat and message state)."""
        self.calls.clear()

    def assert_clean(self) -> None:
        if self.violations:
            listing = "\n".join(f"  - {violation}" for violation in self.violations)
            raise AssertionError(
                f"the bot sent {len(self.violations)} request(s) Telegram would refuse:\n" + listing
            )

    def fail_next(
        self,
        method: str,
        status: int = 400,
        description: str | None = None,
        retry_after: int | None = None,
        *,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        """Answer the next call of ``method`` with this error (queued; one per call)."""
        parameters: JsonDict = {}
        if retry_after is not None:
            parameters["retry_after"] = retry_after
        if migrate_to_chat_id is not None:
            parameters["migrate_to_chat_id"] = migrate_to_chat_id
        if description is None:
            description = {
                400: "Bad Request",
                403: "Forbidden",
                409: "Conflict",
                429: f"Too Many Requests: retry after {retry_after}",
                500: "Internal Server Error",
                502: "Bad Gateway",
            }.get(status, f"Error {status}")
        failure = InjectedFailure(status, description, parameters or None)
        self._failures.setdefault(method.lower(), deque()).append(failure)

    def fail_always(
        self,
        matches: Callable[[str, JsonDict], bool],
        status: int = 400,
        description: str = "Bad Request: the request was refused",
    ) -> None:
        """Answer every call for which ``matches(method, params)`` holds with this error, for
        good (a request Telegram refuses whenever it is made)."""
        self._standing_failures.append((matches, InjectedFailure(status, description)))

    def flood(self, chat_id: int, seconds: float) -> None:
        """The chat is in a flood wait for ``seconds`` (by the fake's clock): every request to
        it is answered 429 "retry after N", N the seconds left, until then."""
        self._floods[chat_id] = self.clock() + seconds

    def lift_flood(self, chat_id: int) -> None:
        self._floods.pop(chat_id, None)

    def stall(self, chat_id: int) -> asyncio.Event:
        """The chat's requests wait (a slow chat) until the event returned is set."""
        return self._stalls.setdefault(chat_id, asyncio.Event())

    def hang_next(
        self, matches: Callable[[str, JsonDict], bool], *, timeout_s: float | None = None
    ) -> HungCall:
        """The next call for which ``matches(method, params)`` holds arrives and gets no answer
        until ``released`` is set: the bot's side waits as on a request whose process died (a
        test cancels it) or that Telegram took for ever to answer; after ``timeout_s`` (if
        given) it is answered 502."""
        hung = HungCall(
            matches, asyncio.get_running_loop().create_future(), asyncio.Event(), timeout_s
        )
        self._hangs.append(hung)
        return hung

    def unhang(self, hung: HungCall) -> None:
        """A hang that no call met is called off."""
        if hung in self._hangs:
            self._hangs.remove(hung)

    def wait_for_call(self, matches: Callable[[ApiCall], bool]) -> asyncio.Future[ApiCall]:
        """A future of the next call for which ``matches`` holds, once it is answered."""
        waiter: asyncio.Future[ApiCall] = asyncio.get_running_loop().create_future()
        self._call_waiters.append((matches, waiter))
        return waiter

    def _tell_waiters(self, call: ApiCall) -> None:
        waiting = []
        for matches, waiter in self._call_waiters:
            if waiter.done():
                continue
            if matches(call):
                waiter.set_result(call)
            else:
                waiting.append((matches, waiter))
        self._call_waiters = waiting

    def register_user(self, user: Mapping[str, Any]) -> None:
        """Remember a user's names, for private chat objects and ChatMember answers."""
        self.users[int(user["id"])] = dict(user)

    def register_chat(self, chat: Mapping[str, Any]) -> None:
        """Remember a group's title and type (otherwise derived from its id)."""
        self.chats[int(chat["id"])] = dict(chat)

    def set_member_status(self, chat_id: int, user_id: int, status: str) -> None:
        chat_member_dict({"id": user_id}, status)  # validates the status name
        self.member_status.setdefault(chat_id, {})[user_id] = status

    def set_members(self, chat_id: int, user_ids: Iterable[int]) -> None:
        """Make these users members of the group (admins stay admins)."""
        statuses = self.member_status.setdefault(chat_id, {})
        for user_id in user_ids:
            if statuses.get(user_id) not in ("administrator", "creator"):
                statuses[user_id] = "member"

    def note_member(self, chat_id: int, user_id: int) -> None:
        """Someone seen acting in the group is in it, unless they are known to have left."""
        self.member_status.setdefault(chat_id, {}).setdefault(user_id, "member")

    def set_admins(
        self, chat_id: int, user_ids: Iterable[int], *, creator: int | None = None
    ) -> None:
        """Make exactly these users the administrators (and ``creator`` the owner)."""
        statuses = self.member_status.setdefault(chat_id, {})
        for user_id, status in list(statuses.items()):
            if status in ("administrator", "creator"):
                statuses[user_id] = "member"
        for user_id in user_ids:
            statuses[user_id] = "administrator"
        if creator is not None:
            statuses[creator] = "creator"

    def set_left(self, chat_id: int, user_ids: Iterable[int]) -> None:
        for user_id in user_ids:
            self.set_member_status(chat_id, user_id, "left")

    def status_of(self, chat_id: int, user_id: int) -> str:
        """A user's status in a chat: in a group, only the bot and the users it was told of
        (``set_members``, ``note_member``, ...) are in it; the benchmarks' mode, which is told
        of nobody, counts everyone in."""
        if chat_id > 0 and user_id in (chat_id, self.bot_id):
            return "member"
        if user_id == self.bot_id and chat_id in self.kicked_from:
            return "kicked"
        stranger = "left" if chat_id < 0 and user_id != self.bot_id and self.checks else "member"
        return self.member_status.get(chat_id, {}).get(user_id, stranger)

    def kick_bot(self, chat_id: int) -> None:
        """The group removed the bot: from now on it gets 403 there."""
        self.kicked_from.add(chat_id)

    def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group became a supergroup: calls to the old id get Telegram's migrate error."""
        self.migrated[old_chat_id] = new_chat_id
        if old_chat_id in self.chats:
            self.chats[new_chat_id] = {
                **self.chats[old_chat_id],
                "id": new_chat_id,
                "type": "supergroup",
            }
        if old_chat_id in self.member_status:
            self.member_status[new_chat_id] = dict(self.member_status[old_chat_id])

    def next_message_id(self, chat_id: int) -> int:
        """Message ids are per chat and shared by the bot's and the users' messages."""
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def note_incoming(self, message: Mapping[str, Any]) -> None:
        """Remember a message a user sent (so deleting it behaves like Telegram)."""
        chat = message["chat"]
        self.incoming[(int(chat["id"]), int(message["message_id"]))] = dict(message)

    def push_update(self, update: Mapping[str, Any]) -> None:
        """Queue an update for getUpdates (for tests that run real polling)."""
        self.pending_updates.append(dict(update))

    def chat_dict(self, chat_id: int) -> JsonDict:
        """The Chat object Telegram puts into messages for this chat."""
        if chat_id in self.chats:
            return dict(self.chats[chat_id])
        if chat_id > 0:
            user = self.users.get(chat_id, {})
            chat: JsonDict = {
                "id": chat_id,
                "type": "private",
                "first_name": user.get("first_name", f"User {chat_id}"),
            }
            for key in ("last_name", "username"):
                if user.get(key):
                    chat[key] = user[key]
            return chat
        return {"id": chat_id, "type": chat_type_for_id(chat_id), "title": f"Group {chat_id}"}

    def user_dict(self, user_id: int) -> JsonDict:
        if user_id == self.bot_id:
            return self.bot_sender
        default = {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}
        return dict(self.users.get(user_id, default))

    def bot_messages(self, chat_id: int, *, include_deleted: bool = False) -> list[MessageRecord]:
        """The bot's messages in a chat, oldest first."""
        return sorted(
            (
                record
                for (record_chat, _), record in self.messages.items()
                if record_chat == chat_id and (include_deleted or not record.deleted)
            ),
            key=lambda record: record.message_id,
        )

    def visible_messages(self, chat_id: int) -> list[MessageRecord]:
        """The bot's messages in a chat that are not deleted, oldest first."""
        return self.bot_messages(chat_id)

    def texts(self, chat_id: int) -> list[str]:
        """The plain text (or caption) of each visible bot message in a chat, oldest first."""
        return [record.plain_text or "" for record in self.visible_messages(chat_id)]

    def last_message(self, chat_id: int, *, include_deleted: bool = False) -> MessageRecord:
        """The newest (visible) bot message in a chat; LookupError when there is none."""
        records = self.bot_messages(chat_id, include_deleted=include_deleted)
        if not records:
            chats = sorted({chat for chat, _ in self.messages})
            raise LookupError(f"the bot has no message in chat {chat_id} (chats: {chats})")
        return records[-1]

    def message(self, chat_id: int, message_id: int) -> MessageRecord:
        try:
            return self.messages[(chat_id, message_id)]
        except KeyError:
            raise LookupError(f"the bot sent no message {message_id} in chat {chat_id}") from None

    def buttons(self, chat_id: int, message_id: int) -> list[JsonDict]:
        """The inline buttons of a bot message, row by row flattened."""
        return self.message(chat_id, message_id).buttons

    def find_button(
        self, chat_id: int, predicate_or_substring: str | Callable[[JsonDict], bool]
    ) -> tuple[int, JsonDict] | None:
        """(message_id, button) of the first matching button, newest visible message first.

        A string matches buttons whose text contains it; a callable gets the button dict.
        """
        matches: Callable[[JsonDict], bool]
        if isinstance(predicate_or_substring, str):
            wanted = predicate_or_substring
            matches = lambda button: wanted in str(button.get("text", ""))  # noqa: E731
        else:
            matches = predicate_or_substring
        for record in reversed(self.visible_messages(chat_id)):
            for button in record.buttons:
                if matches(button):
                    return record.message_id, button
        return None

    # -- without checks (checks=False) ----------------------------------------------------------

    def _answer_unchecked(self, url: str, request_data: RequestData | None) -> tuple[int, bytes]:
        method = url.rsplit("/", 1)[-1].lower()
        # As HTTPXRequest sends them: every parameter a string, JSON-encoded unless a string.
        params = request_data.json_parameters if request_data is not None else {}
        chat_id = _int_or_none(params.get("chat_id"))
        self._record(method, chat_id, params.get("text"))
        failures = self._failures.get(method) if self._failures else None
        if failures:
            failure = failures.popleft()
            error = ApiError(failure.status, failure.description, failure.parameters)
            return self._answer_error(None, error)
        refused = self._beyond_limits(method, chat_id)
        if refused is not None:
            return self._answer_error(None, refused)
        return 200, b'{"ok":true,"result":' + self._unchecked_result(method, params, chat_id) + b"}"

    def _unchecked_result(
        self, method: str, params: Mapping[str, str], chat_id: int | None
    ) -> bytes:
        """The result as Telegram's JSON."""
        if method == "sendmessage" and chat_id is not None:
            message_id = self.next_message_id(chat_id)
            return self._unchecked_message(params, chat_id, message_id, edited=False)
        if method in ("editmessagetext", "editmessagereplymarkup"):
            message_id = _int_or_none(params.get("message_id"))
            if chat_id is None or message_id is None:
                return b"true"  # an inline message
            return self._unchecked_message(params, chat_id, message_id, edited=True)
        if method == "getme":
            return orjson.dumps(self.bot_user)
        if method == "getchatmember" and chat_id is not None:
            user_id = int(params.get("user_id", "0"))
            member = chat_member_dict(self.user_dict(user_id), self.status_of(chat_id, user_id))
            return orjson.dumps(member)
        return b"true"

    def _unchecked_message(
        self, params: Mapping[str, str], chat_id: int, message_id: int, *, edited: bool
    ) -> bytes:
        now = self._now()
        message: JsonDict = {
            "message_id": message_id,
            "from": self.bot_sender,
            "chat": self.chat_dict(chat_id),
            "date": now,
        }
        if edited:
            message["edit_date"] = now
        text = params.get("text")
        if text is not None:
            message["text"] = text
        encoded = orjson.dumps(message)
        markup = params.get("reply_markup")
        if markup is not None and markup.startswith('{"inline_keyboard"'):
            # The keyboard comes back as it was sent: its JSON goes in as it is, not decoded.
            encoded = b'%s,"reply_markup":%s}' % (encoded[:-1], markup.encode())
        return encoded

    # -- request plumbing -----------------------------------------------------------------------

    def _decode_params(self, method: str, request_data: RequestData | None) -> JsonDict:
        if request_data is None:
            return {}
        # What goes over the wire: each parameter a string, JSON-encoded unless it is a string
        # (python-telegram-bot's form encoding). Decoded as Telegram reads it: by the field's
        # type in the spec; an "Integer or String" field (a chat id) that is a number is one
        # (and a fraction there is a Float, which the spec check refuses).
        params: JsonDict = dict(request_data.json_parameters)
        fields = self.spec.method_fields(method) if self.spec is not None else {}
        for key, value in params.items():
            spec_field = fields.get(key)
            types = spec_field["types"] if spec_field is not None else []
            if "String" in types:
                if "Integer" in types and _NUMBER.fullmatch(value):
                    params[key] = json.loads(value)
            elif spec_field is not None or key not in _STRING_PARAMS:
                params[key] = _json_or_value(value)
        if request_data.contains_files:
            for name in request_data.multipart_data:
                params.setdefault(name, UploadedFile(name))
        return params

    def _answer_error(self, call: ApiCall | None, error: ApiError) -> tuple[int, bytes]:
        if call is not None:
            call.status, call.error = error.status, error.description
        body: JsonDict = {
            "ok": False,
            "error_code": error.status,
            "description": error.description,
        }
        if error.parameters:
            body["parameters"] = error.parameters
        return error.status, json.dumps(body).encode("utf-8")

    def _now(self) -> int:
        return int(self.clock())

    def _beyond_limits(self, method: str, chat_id: object) -> ApiError | None:
        """Telegram's 429 for a request beyond its flood limits (``limits``), else None."""
        if self.limits is None:
            return None
        try:
            self.limits.admit(method, chat_id, self.clock())
        except Refused as refused:
            wait = refused.retry_after
            return ApiError(429, f"Too Many Requests: retry after {wait}", {"retry_after": wait})
        return None

    def _check_chat_access(self, method: str, params: Mapping[str, Any]) -> None:
        chat_id = params.get("chat_id")
        if not isinstance(chat_id, int) or isinstance(chat_id, bool):
            return
        if chat_id in self.migrated:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": self.migrated[chat_id]},
            )
        outgoing = method.startswith(("send", "forward", "copy"))
        writes = outgoing or method.startswith(("edit", "pin", "unpin"))
        if chat_id > 0:
            if writes and chat_id in self.blocked_users:
                raise ApiError(403, "Forbidden: bot was blocked by the user")
            if outgoing and chat_id not in self.started_users:
                raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        elif chat_id in self.kicked_from and (writes or method.startswith(("delete", "get"))):
            kind = "supergroup" if chat_type_for_id(chat_id) == "supergroup" else "group"
            raise ApiError(403, f"Forbidden: bot was kicked from the {kind} chat")

    def _dispatch(self, method: str, params: JsonDict) -> Any:
        handler = getattr(self, f"_api_{method.lower()}", None)
        if handler is not None:
            return handler(params)
        returns = self._returns(method)
        if "Message" in returns and method.lower().startswith(("send", "forward", "copy")):
            return self._send(method, params).to_api_dict()
        if "Message" in returns and "chat_id" in params and "message_id" in params:
            # Other edits (live location, media): answer with the message as it stands.
            return self._editable(params, "edit").to_api_dict()
        if returns == ["MessageId"] and isinstance(params.get("chat_id"), int):
            return {"message_id": self.next_message_id(params["chat_id"])}  # copyMessage
        return True

    def _returns(self, method: str) -> list[str]:
        if self.spec is not None:
            return self.spec.returns(method)
        # Without api.json: every send* method but these few answers with the sent Message.
        lower = method.lower()
        if lower.startswith("send") and lower not in _SEND_METHODS_WITHOUT_MESSAGE:
            return ["Message"]
        return []

    # -- messages -------------------------------------------------------------------------------

    def _render(self, params: Mapping[str, Any], name: str) -> ParsedText:
        entity_param = "entities" if name == "text" else "caption_entities"
        rendered = render_text(
            str(params.get(name, "")), params.get("parse_mode"), params.get(entity_param)
        )
        for entity in rendered.entities:
            # <a href="tg://user?id=N"> becomes a text_mention of that user.
            url = str(entity.get("url", ""))
            match = re.fullmatch(r"tg://user\?id=(\d+)", url)
            if entity.get("type") == "text_link" and match:
                del entity["url"]
                entity.update(type="text_mention", user=self.user_dict(int(match.group(1))))
        return rendered

    def _version(
        self, method: str, params: Mapping[str, Any], text_param: str | None
    ) -> MessageVersion:
        rendered = self._render(params, text_param) if text_param else None
        markup = params.get("reply_markup")
        return MessageVersion(
            method=method,
            text=params.get(text_param) if text_param else None,
            parse_mode=params.get("parse_mode"),
            sent_entities=params.get("entities" if text_param == "text" else "caption_entities"),
            reply_markup=_inline_markup(markup),
            plain_text=rendered.text if rendered else None,
            entities=rendered.entities if rendered else [],
            date=self._now(),
        )

    def _send(self, method: str, params: JsonDict) -> MessageRecord:
        chat_id = params["chat_id"]
        if not isinstance(chat_id, int):
            raise ApiError(400, "Bad Request: chat not found")
        self._check_reply(chat_id, params)
        kind = "text" if method.lower() == "sendmessage" else _media_kind(method)
        text_param = "text" if kind == "text" else "caption"
        record = MessageRecord(
            chat=self.chat_dict(chat_id),
            message_id=self.next_message_id(chat_id),
            sender=self.bot_sender,
            date=self._now(),
            kind=kind,
            history=[self._version(method, params, text_param)],
            media=_media_fields(kind, params, next(self._file_serial)),
        )
        self.messages[(chat_id, record.message_id)] = record
        return record

    def _check_reply(self, chat_id: int, params: Mapping[str, Any]) -> None:
        """A reply to a message that is gone (deleted, or never there) is refused, unless it
        allows sending without the reply."""
        reply = params.get("reply_parameters")
        if isinstance(reply, dict):
            message_id = reply.get("message_id")
            allowed = reply.get("allow_sending_without_reply") is True
        else:
            message_id = params.get("reply_to_message_id")
            allowed = params.get("allow_sending_without_reply") is True
        if not isinstance(message_id, int) or allowed:
            return
        key = (chat_id, message_id)
        record = self.messages.get(key)
        there = (record is not None and not record.deleted) or (
            key in self.incoming and key not in self.deleted_incoming
        )
        if not there:
            raise ApiError(400, "Bad Request: message to be replied not found")

    def _editable(self, params: Mapping[str, Any], action: str) -> MessageRecord:
        key = (params["chat_id"], params["message_id"])
        record = self.messages.get(key)
        if record is None or record.deleted:
            if action == "edit" and key in self.incoming:
                raise ApiError(400, "Bad Request: message can't be edited")
            raise ApiError(400, f"Bad Request: message to {action} not found")
        return record

    def _edit(self, method: str, params: JsonDict, text_param: str | None) -> Any:
        if "inline_message_id" in params:
            return True  # edits of inline messages answer True, not the message
        record = self._editable(params, "edit")
        if text_param == "text" and record.kind != "text":
            raise ApiError(400, "Bad Request: there is no text in the message to edit")
        if text_param == "caption" and record.kind == "text":
            raise ApiError(400, "Bad Request: there is no caption in the message to edit")
        new = self._version(method, params, text_param)
        if text_param is None:
            # editMessageReplyMarkup keeps the text.
            old = record.current
            new.text, new.parse_mode, new.sent_entities = old.text, old.parse_mode, None
            new.plain_text, new.entities = old.plain_text, old.entities
        # Like Telegram: an edit without reply_markup removes the inline keyboard.
        if new.content() == record.current.content():
            raise ApiError(
                400,
                "Bad Request: message is not modified: specified new message content and reply "
                "markup are exactly the same as a current content and reply markup of the "
                "message",
            )
        record.history.append(new)
        record.edit_date = new.date
        return record.to_api_dict()

    # -- method handlers (looked up by name: _api_<lowercase method>) ---------------------------

    def _api_getme(self, params: JsonDict) -> Any:
        return self.bot_user

    def _api_sendmessage(self, params: JsonDict) -> Any:
        return self._send("sendMessage", params).to_api_dict()

    def _api_editmessagetext(self, params: JsonDict) -> Any:
        return self._edit("editMessageText", params, "text")

    def _api_editmessagecaption(self, params: JsonDict) -> Any:
        return self._edit("editMessageCaption", params, "caption")

    def _api_editmessagereplymarkup(self, params: JsonDict) -> Any:
        return self._edit("editMessageReplyMarkup", params, None)

    def _api_deletemessage(self, params: JsonDict) -> Any:
        chat_id, message_id = params["chat_id"], params["message_id"]
        record = self.messages.get((chat_id, message_id))
        if record is not None and not record.deleted:
            record.deleted = True
            return True
        key = (chat_id, message_id)
        if key not in self.incoming or key in self.deleted_incoming:
            raise ApiError(400, "Bad Request: message to delete not found")
        # Others' messages in groups need the bot to be an admin with can_delete_messages.
        if chat_id < 0 and self.status_of(chat_id, self.bot_id) not in ("administrator", "creator"):
            raise ApiError(400, "Bad Request: message can't be deleted")
        self.deleted_incoming.add(key)
        return True

    def _api_deletemessages(self, params: JsonDict) -> Any:
        for message_id in params.get("message_ids", []):
            record = self.messages.get((params["chat_id"], message_id))
            if record is not None:
                record.deleted = True
        return True

    def _api_answercallbackquery(self, params: JsonDict) -> Any:
        query_id = str(params["callback_query_id"])
        if query_id in self.callback_answers:
            raise ApiError(
                400,
                "Bad Request: query is too old and response timeout expired or query ID is invalid",
            )
        self.callback_answers[query_id] = dict(params)
        return True

    def _api_answerinlinequery(self, params: JsonDict) -> Any:
        query_id = str(params["inline_query_id"])
        if query_id in self.inline_answers:
            raise ApiError(400, "Bad Request: query is too old and response timeout expired")
        self.inline_answers[query_id] = dict(params)
        return True

    def _api_savepreparedinlinemessage(self, params: JsonDict) -> Any:
        prepared_id = f"prepared{len(self.prepared_messages) + 1}"
        self.prepared_messages[prepared_id] = dict(params)
        return {"id": prepared_id, "expiration_date": int(self.clock()) + 86_400}

    def _api_getchatmember(self, params: JsonDict) -> Any:
        chat_id, user_id = params["chat_id"], params["user_id"]
        return chat_member_dict(self.user_dict(user_id), self.status_of(chat_id, user_id))

    def _api_getchatadministrators(self, params: JsonDict) -> Any:
        chat_id = params["chat_id"]
        if chat_id > 0:
            raise ApiError(400, "Bad Request: there are no administrators in the private chat")
        statuses = self.member_status.get(chat_id, {})
        return [
            chat_member_dict(self.user_dict(user_id), status)
            for user_id, status in sorted(statuses.items())
            if status in ("creator", "administrator")
        ]

    def _api_getchatmembercount(self, params: JsonDict) -> Any:
        statuses = self.member_status.get(params["chat_id"], {})
        return max(2, sum(status not in ("left", "kicked") for status in statuses.values()))

    def _api_getchat(self, params: JsonDict) -> Any:
        chat_id = params["chat_id"]
        if chat_id > 0 and chat_id not in self.started_users and chat_id not in self.users:
            raise ApiError(400, "Bad Request: chat not found")
        return {
            **self.chat_dict(chat_id),
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": True,
                "limited_gifts": True,
                "unique_gifts": True,
                "premium_subscription": True,
                "gifts_from_channels": True,
            },
        }

    def _api_getwebhookinfo(self, params: JsonDict) -> Any:
        return {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": len(self.pending_updates),
        }

    def _api_setwebhook(self, params: JsonDict) -> Any:
        self.webhook_url = str(params["url"])
        return True

    def _api_deletewebhook(self, params: JsonDict) -> Any:
        self.webhook_url = ""
        if params.get("drop_pending_updates"):
            self.pending_updates.clear()
        return True

    def _api_setmycommands(self, params: JsonDict) -> Any:
        self.commands[_commands_key(params)] = list(params["commands"])
        return True

    def _api_getmycommands(self, params: JsonDict) -> Any:
        return self.commands.get(_commands_key(params), [])

    def _api_deletemycommands(self, params: JsonDict) -> Any:
        self.commands.pop(_commands_key(params), None)
        return True

    def _api_setchatmenubutton(self, params: JsonDict) -> Any:
        self.menu_buttons[params.get("chat_id")] = params.get("menu_button", {"type": "default"})
        return True

    def _api_getchatmenubutton(self, params: JsonDict) -> Any:
        return self.menu_buttons.get(params.get("chat_id"), {"type": "commands"})

    async def _get_updates(self, params: JsonDict) -> Any:
        if self.webhook_url:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; use "
                "deleteWebhook to delete the webhook first",
            )
        offset = params.get("offset")
        if isinstance(offset, int):
            # Like Telegram: an offset confirms (and forgets) every earlier update.
            self.pending_updates = [
                update for update in self.pending_updates if update["update_id"] >= offset
            ]
        if not self.pending_updates:
            # Stand in for long polling without blocking shutdown: a short pause, then [].
            await asyncio.sleep(self.poll_interval)
        limit = params.get("limit", 100)
        return self.pending_updates[:limit]


def _inline_markup(markup: Any) -> JsonDict | None:
    """The inline keyboard a message ends up with (Telegram keeps no empty keyboards)."""
    if not isinstance(markup, dict) or "inline_keyboard" not in markup:
        return None
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not any(rows):
        return None
    return markup


def _commands_key(params: Mapping[str, Any]) -> tuple[str, str]:
    scope = params.get("scope") or {"type": "default"}
    return json.dumps(scope, sort_keys=True), str(params.get("language_code", ""))


def _media_kind(method: str) -> str:
    kind = method.removeprefix("send").lower() if method.lower().startswith("send") else ""
    return kind or "unknown"


def _media_fields(kind: str, params: Mapping[str, Any], serial: int) -> JsonDict:
    """Minimal media objects, enough for PTB to build the Message."""
    file_ids = {"file_id": f"FAKEFILE{serial}", "file_unique_id": f"FAKEUNIQ{serial}"}
    if kind == "photo":
        return {"photo": [{**file_ids, "width": 800, "height": 600}]}
    if kind in ("document", "audio", "voice"):
        return {kind: file_ids if kind != "voice" else {**file_ids, "duration": 1}}
    if kind == "dice":
        return {"dice": {"emoji": params.get("emoji", "\U0001f3b2"), "value": 1}}
    return {}
