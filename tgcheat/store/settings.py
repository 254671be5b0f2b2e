"""What groups and users chose: a group's rules for its next games and its language, a user's
language for their private messages. Kept until changed (no expiry)."""

from __future__ import annotations

import json

from redis.asyncio import Redis

from tgcheat.engine.rules import Rules
from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded

_RULES = "rules"
_LANGUAGE = "lang"


class Settings:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def group_rules(self, chat_id: int) -> Rules | None:
        """The rules a group chose with /settings for its next games (None: the default)."""
        raw = await bounded(self._redis.hget(self._keys.group(chat_id), _RULES))
        return Rules.from_dict(json.loads(raw)) if raw else None

    async def save_group_rules(self, chat_id: int, rules: Rules) -> None:
        document = json.dumps(rules.to_dict())
        await bounded(self._redis.hset(self._keys.group(chat_id), _RULES, document))

    async def group_language(self, chat_id: int) -> str | None:
        raw = await bounded(self._redis.hget(self._keys.group(chat_id), _LANGUAGE))
        return _text(raw) if raw else None

    async def save_group_language(self, chat_id: int, language: str) -> None:
        await bounded(self._redis.hset(self._keys.group(chat_id), _LANGUAGE, language))

    async def user_language(self, user_id: int) -> str | None:
        raw = await bounded(self._redis.hget(self._keys.user(user_id), _LANGUAGE))
        return _text(raw) if raw else None

    async def save_user_language(self, user_id: int, language: str) -> None:
        await bounded(self._redis.hset(self._keys.user(user_id), _LANGUAGE, language))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
