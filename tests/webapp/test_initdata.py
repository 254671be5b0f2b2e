"""Telegram's initData: the documented signature, checked with the bot token, and its age."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qsl, urlencode

import orjson
import pytest

from tgcheat.webapp.initdata import MAX_AGE_S, InitDataRefused, sign, verify

TOKEN = "123456:TEST-token"
NOW = 1_700_000_000


def fields(user_id: int = 11, auth_date: int = NOW) -> dict[str, str]:
    user = {"id": user_id, "first_name": "Ann", "language_code": "ru"}
    return {"query_id": "AAH1", "user": orjson.dumps(user).decode(), "auth_date": str(auth_date)}


def test_a_string_signed_as_telegram_documents_names_its_user() -> None:
    data = fields()
    # The documented algorithm, spelled out independently of the code under test.
    check = "\n".join(f"{k}={v}" for k, v in sorted(data.items()))
    secret = hmac.new(b"WebAppData", TOKEN.encode(), hashlib.sha256).digest()
    digest = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    user = verify(urlencode({**data, "hash": digest}), TOKEN, NOW + 5)
    assert (user.user_id, user.first_name, user.language_code) == (11, "Ann", "ru")
    assert sign(data, TOKEN) == urlencode({**data, "hash": digest})


@pytest.mark.parametrize(
    "forge",
    [
        "other user",
        "other token",
        "no hash",
        "hash of another string",
        "field added",
        "empty",
        "repeated field",
    ],
)
def test_a_forged_string_is_refused(forge: str) -> None:
    good = sign(fields(), TOKEN)
    pairs = dict(parse_qsl(good))
    match forge:
        case "other user":
            pairs["user"] = pairs["user"].replace("11", "12")
            data = urlencode(pairs)
        case "other token":
            data = sign(fields(), "123456:another")
        case "no hash":
            del pairs["hash"]
            data = urlencode(pairs)
        case "hash of another string":
            pairs["hash"] = dict(parse_qsl(sign(fields(12), TOKEN)))["hash"]
            data = urlencode(pairs)
        case "field added":
            data = good + "&start_param=-100123"
        case "empty":
            data = ""
        case "repeated field":
            data = good + "&auth_date=" + str(NOW)
    with pytest.raises(InitDataRefused):
        verify(data, TOKEN, NOW + 5)


def test_an_old_string_is_refused() -> None:
    data = sign(fields(auth_date=NOW - MAX_AGE_S - 1), TOKEN)
    with pytest.raises(InitDataRefused, match="expired"):
        verify(data, TOKEN, NOW)
    assert verify(sign(fields(auth_date=NOW - MAX_AGE_S + 1), TOKEN), TOKEN, NOW).user_id == 11


def test_a_string_from_the_future_is_refused() -> None:
    with pytest.raises(InitDataRefused):
        verify(sign(fields(auth_date=NOW + 3600), TOKEN), TOKEN, NOW)
