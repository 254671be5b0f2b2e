"""Who is asking: Telegram's signed ``initData`` of a Mini App.

Telegram hands the page a query string (``user=...&auth_date=...&hash=...``) signed with the
bot's token, as its Mini App documentation describes: the data-check string is every field but
``hash``, as ``key=value`` sorted by key and joined by newlines; the secret key is
HMAC-SHA256 of the bot token keyed with "WebAppData"; ``hash`` is the hex HMAC-SHA256 of the
data-check string under that key. A page cannot forge it without the token.

Its age is checked too (``auth_date``): a signed string lasts ``MAX_AGE_S`` after Telegram
made it (the Mini App was opened), and the page is opened again after that. Pure: the time
comes in as an argument.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import parse_qsl

import orjson

#: How long a signed initData is accepted after Telegram signed it (s): a long game fits in it.
MAX_AGE_S = 6 * 3600
#: How far in the future ``auth_date`` may lie (s): clocks differ a little.
CLOCK_SKEW_S = 60
#: Longer strings are not even parsed (Telegram's are well under 2 KB).
MAX_LENGTH = 4096


class InitDataRefused(Exception):
    """The initData is missing, malformed, forged or too old (the API answers 401)."""


@dataclass(frozen=True, slots=True)
class WebAppUser:
    """The person Telegram vouches for."""

    user_id: int
    first_name: str
    language_code: str | None
    #: When Telegram signed the data (Unix seconds).
    auth_date: int
    #: The Mini App link's ``startapp`` parameter, if it was opened through one.
    start_param: str | None
    #: The signature itself: it names this opening of the app (replay protection keys on it).
    hash: str
    last_name: str = ""

    @property
    def full_name(self) -> str:
        """Their name in Telegram, first and last (never their username)."""
        return f"{self.first_name} {self.last_name}".strip()


def secret_key(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def sign(fields: dict[str, str], bot_token: str) -> str:
    """``fields`` as Telegram would sign them: the query string with its ``hash`` (for the
    tests, the browser tests and the benchmarks; never needed in production)."""
    from urllib.parse import urlencode

    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    digest = hmac.new(secret_key(bot_token), check.encode(), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})


def verify(init_data: str, bot_token: str, now_s: float, max_age_s: int = MAX_AGE_S) -> WebAppUser:
    """The user ``init_data`` was signed for; ``InitDataRefused`` when it is not authentic,
    is too old, or names no user."""
    if not init_data or len(init_data) > MAX_LENGTH:
        raise InitDataRefused("missing or too long")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError as error:
        raise InitDataRefused("not a query string") from error
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise InitDataRefused("a field is repeated")
    given = fields.pop("hash", "")
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    expected = hmac.new(secret_key(bot_token), check.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise InitDataRefused("bad signature")
    try:
        auth_date = int(fields["auth_date"])
        user = orjson.loads(fields["user"])
        user_id = user["id"]
    except (KeyError, ValueError, TypeError, orjson.JSONDecodeError) as error:
        raise InitDataRefused("no user or date") from error
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise InitDataRefused("no user id")
    if auth_date > now_s + CLOCK_SKEW_S or now_s - auth_date > max_age_s:
        raise InitDataRefused("expired")
    language = user.get("language_code")
    return WebAppUser(
        user_id=user_id,
        first_name=str(user.get("first_name", "")),
        language_code=language if isinstance(language, str) else None,
        auth_date=auth_date,
        start_param=fields.get("start_param"),
        hash=expected,
        last_name=str(user.get("last_name", "")),
    )
