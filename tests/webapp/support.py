"""Signed initData for the players of a test, and calls of the Mini App's API."""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson

from tests.bot.conftest import TOKEN
from tests.support.updates import User
from tgcheat.webapp.initdata import sign


def init_data(
    user: User,
    *,
    auth_date: int | None = None,
    token: str = TOKEN,
    start_param: str | None = None,
    language: str = "en",
) -> str:
    """What Telegram hands the Mini App of ``user``, signed with the bot's token
    (``start_param``: opened through the Mini App link's ``startapp``)."""
    when = int(time.time()) if auth_date is None else auth_date
    who = {"id": user.id, "first_name": user.first_name, "language_code": language}
    fields = {"query_id": f"q{user.id}", "user": orjson.dumps(who).decode(), "auth_date": str(when)}
    if start_param is not None:
        fields["start_param"] = start_param
    return sign(fields, token)


def auth(data: str) -> dict[str, str]:
    return {"Authorization": f"tma {data}"}


async def get_state(client: httpx.AsyncClient, user: User, place: int | str) -> Any:
    response = await client.get(
        "/app/api/state", params={"place": str(place)}, headers=auth(init_data(user))
    )
    assert response.status_code == 200, response.text
    return response.json()


_REQUESTS = iter(range(10**9))


async def act(
    client: httpx.AsyncClient, user: User, body: dict[str, Any], data: str | None = None
) -> httpx.Response:
    body = {"request": f"req-{next(_REQUESTS):08d}"} | body
    return await client.post(
        "/app/api/act", json=body, headers=auth(data if data is not None else init_data(user))
    )
