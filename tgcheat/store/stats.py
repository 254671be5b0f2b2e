"""Players' statistics in Redis: a hash per person (across groups) and a hash per chat (a
group's table, one row per player), each counted once per finished game; with them each
person's rating and achievements (tgcheat.table.rating, tgcheat.table.achievements), and the
rating boards of each group and across groups (sorted sets).

Exactly once, with one key per script call (so that the keys of several players need not share
a Redis Cluster slot): every hash remembers the last few games it counted (``RECENT_GAMES``),
and a game is counted in three round trips:

1. the chat's script: a game the chat knows as counted for everyone (field ``d``) stops here,
   answering the game's news (field ``o``); else the group's rows are added, once (field
   ``r``). In the same pipeline, each person's figures and rating are read (the new ratings
   and the achievements are worked out from them, in Python);
2. one pipeline of each person's script, which adds a game it does not remember: the figures,
   the rating (applied as a change to what is stored, should another game have moved it since
   it was read), the achievements not earned before; for a game it remembers it answers the
   news it kept of it (``lo``);
3. the chat's mark that the game is counted for everyone, with its news and the group's boards
   (keys of the chat's slot), and the global boards of those who did not opt out.

So a re-delivered update, two processes, or the clock showing a result whose publisher died,
count a game once: whoever comes second finds it remembered, and one who died between the steps
is completed by the next try. Only the chat's current game is ever counted again (the trigger is
its finished session), and it is the newest the chat remembers: a late second try, even days
later, stops at the first step.

Memory is bounded per person: one row of numbers, a name, the last games counted and the groups
whose tables have a row of theirs (``MAX_GROUPS``, so that /forgetme can remove those rows; the
group that falls out of the list loses the person's row at once). Statistics are forgotten
``STATS_TTL_S`` after their last game counted; a group's when the bot leaves it
(``GameStore.forget_chat``), a person's with /forgetme (``forget_person``).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import NoScriptError

from tgcheat.store.keys import Keys
from tgcheat.store.timeout import bounded
from tgcheat.table.achievements import earned_over_time, ordered
from tgcheat.table.rating import (
    BASE,
    MU,
    RATED_GAMES_PER_DAY,
    SCALE,
    SIGMA,
    Skill,
    day_of,
    previous_season,
    rated,
    season_of,
)
from tgcheat.table.standing import GameNews, PersonNews, Profile
from tgcheat.table.stats import (
    BEST_STREAK_AT,
    ROW_FIELDS,
    STREAK_AT,
    TOP_SIZE,
    GameRecord,
    Line,
    Row,
)

#: How many games each hash remembers as counted: a second try comes within seconds (the
#: outbox's lease), long before a person finishes this many other games.
RECENT_GAMES = 8
#: The groups whose tables keep a row of a person, at most (the latest groups played in).
MAX_GROUPS = 64
#: Statistics not added to for this long are forgotten (a person's, a group's).
STATS_TTL_S = 365 * 24 * 3600
#: How long /forgetme's mark stays: a game that ended before it is not counted for the person
#: when its count comes late (a second process, the clock showing a result whose publisher
#: died: within minutes), nor does it bring back their row in the group's table.
FORGOTTEN_MARK_S = 3600

#: A season's boards are kept this long after their last game (the season after can still name
#: its best at its first game; a profile reads the season's rank).
SEASON_BOARD_TTL_S = 100 * 24 * 3600
#: How many seasons' boards may hold a person at once (``SEASON_BOARD_TTL_S``): /forgetme
#: removes them from each.
KEPT_SEASONS = 4
#: The global boards keep the best this many people (a rank below reads "not ranked").
GLOBAL_BOARD_SIZE = 10_000

_NAME, _ROW, _RECENT = b"n", b"s", "r"
_DONE, _GAMES = "d", b"g"

_HELPERS = f"""
local function has(list, item)
  return string.find(' ' .. list .. ' ', ' ' .. item .. ' ', 1, true) ~= nil
end
-- The list with item first, the others after it, keep items at most.
local function remembered(list, item, keep)
  local items = {{item}}
  for word in string.gmatch(list, '%S+') do
    if #items >= keep then break end
    if word ~= item then items[#items + 1] = word end
  end
  return table.concat(items, ' ')
end
-- Add the numbers of added to the row in field; outcome 1 (won) lengthens the streak, 0
-- (lost) ends it, 2 (a game with computer players) leaves it.
local function add_row(key, field, added, outcome)
  local row = {{}}
  for n in string.gmatch(redis.call('HGET', key, field) or '', '%-?%d+') do
    row[#row + 1] = tonumber(n)
  end
  local i = 0
  for n in string.gmatch(added, '%-?%d+') do
    i = i + 1
    row[i] = (row[i] or 0) + tonumber(n)
  end
  for j = 1, {len(ROW_FIELDS)} do row[j] = row[j] or 0 end
  local s, b = {STREAK_AT + 1}, {BEST_STREAK_AT + 1}
  if outcome == '1' then
    row[s] = row[s] + 1
    if row[s] > row[b] then row[b] = row[s] end
  elseif outcome == '0' then
    row[s] = 0
  end
  redis.call('HSET', key, field, table.concat(row, ' '))
end
"""

# The chat's step (KEYS: the chat's hash; ARGV: the game, RECENT_GAMES, the TTL, 1 when the
# group's table counts it, then for each person: user id, name, outcome, the numbers added).
# {0, the game's news}: counted for everyone already; {1, ''}: go on with the people.
_CHAT = (
    _HELPERS
    + """
local key, game = KEYS[1], ARGV[1]
if has(redis.call('HGET', key, 'd') or '', game) then
  local news = redis.call('HGET', key, 'o') or ''
  if string.sub(news, 1, #game + 1) ~= game .. ' ' then news = '' end
  return {0, string.sub(news, #game + 2)}
end
local counted = redis.call('HGET', key, 'r') or ''
if not has(counted, game) then
  if ARGV[4] == '1' then
    redis.call('HINCRBY', key, 'g', 1)
    for i = 5, #ARGV, 4 do
      redis.call('HSET', key, 'n:' .. ARGV[i], ARGV[i + 1])
      add_row(key, 's:' .. ARGV[i], ARGV[i + 3], ARGV[i + 2])
    end
  end
  redis.call('HSET', key, 'r', remembered(counted, game, tonumber(ARGV[2])))
end
redis.call('EXPIRE', key, ARGV[3])
return {1, ''}
"""
)

# A person's step (KEYS: their hash; ARGV: the game, RECENT_GAMES, the TTL, the name, the
# outcome, the numbers added, the group whose table has their row now or '', MAX_GROUPS, when
# the game ended (ms), FORGOTTEN_MARK_S in ms; then the rating as it was read or '', the rating
# after the game or '' (not a rated game), the UTC day of the game, RATED_GAMES_PER_DAY, and
# the achievements the game earns them, space-separated).
# Returns {'dup', their last game's news} for a game counted already ('' when a later game
# came since), {'forgotten'} for one that ended before the person asked to be forgotten (field
# 'f', left by forget_person), else {'', the group that fell out of their list or '', the rating
# shown before, after, the achievements earned for the first time, 1 when they are listed on
# the global board}.
_PERSON = (
    _HELPERS
    + """
local function shown(rating)
  local mu, sigma = string.match(rating, '^(%S+) (%S+)')
  if not mu then return @BASE@ end
  local value = math.floor(@BASE@ + @SCALE@ * (tonumber(mu) - 3 * tonumber(sigma)) + 0.5)
  if value < 0 then value = 0 end
  return value
end
local key, game = KEYS[1], ARGV[1]
local forgot = tonumber(redis.call('HGET', key, 'f'))
if forgot then
  local ended = tonumber(ARGV[9])
  if ended <= forgot then return {'forgotten'} end
  -- A game ended this long after the wish: no earlier game can still be on its way.
  if ended - forgot > tonumber(ARGV[10]) then redis.call('HDEL', key, 'f') end
end
local counted = redis.call('HGET', key, 'r') or ''
if has(counted, game) then
  local last = redis.call('HGET', key, 'lo') or ''
  if string.sub(last, 1, #game + 1) ~= game .. ' ' then last = '' end
  return {'dup', last}
end
redis.call('HSET', key, 'r', remembered(counted, game, tonumber(ARGV[2])), 'n', ARGV[4])
add_row(key, 's', ARGV[6], ARGV[5])
local dropped = ''
if ARGV[7] ~= '' then
  local most = tonumber(ARGV[8])
  local groups = {}
  local list = remembered(redis.call('HGET', key, 'gs') or '', ARGV[7], most + 1)
  for word in string.gmatch(list, '%S+') do groups[#groups + 1] = word end
  if #groups > most then dropped = table.remove(groups) end
  redis.call('HSET', key, 'gs', table.concat(groups, ' '))
end
local before, after = 0, 0
if ARGV[12] ~= '' then
  local stored = redis.call('HGET', key, 'k') or ''
  before = shown(stored)
  after = before
  local day, games = string.match(redis.call('HGET', key, 'dy') or '', '^(%S+) (%S+)')
  if day ~= ARGV[13] then games = 0 end
  if tonumber(games) < tonumber(ARGV[14]) then
    local rating = ARGV[12]
    if stored ~= ARGV[11] and stored ~= '' then
      -- Another game moved it since it was read: this game's change applied to it.
      local mu0, s0 = string.match(ARGV[11] ~= '' and ARGV[11] or '@MU@ @SIGMA@ 0', '^(%S+) (%S+)')
      local mu1, s1, season = string.match(rating, '^(%S+) (%S+) (%S+)')
      local mu, sigma = string.match(stored, '^(%S+) (%S+)')
      rating = string.format('%.4f %.4f %s', tonumber(mu) + tonumber(mu1) - tonumber(mu0),
        tonumber(sigma) * tonumber(s1) / tonumber(s0), season)
    end
    redis.call('HSET', key, 'k', rating, 'dy', ARGV[13] .. ' ' .. (tonumber(games) + 1))
    after = shown(rating)
  end
end
local earned = {}
local have = redis.call('HGET', key, 'a') or ''
for code in string.gmatch(ARGV[15], '%S+') do
  if not has(have, code) then
    earned[#earned + 1] = code
    have = have == '' and code or have .. ' ' .. code
  end
end
if #earned > 0 then redis.call('HSET', key, 'a', have) end
local news = table.concat(earned, ' ')
local last = {game, before, after, ARGV[16], news}
redis.call('HSET', key, 'lo', table.concat(last, ' '))
redis.call('EXPIRE', key, ARGV[3])
local listed = redis.call('HEXISTS', key, 'x') == 0 and 1 or 0
return {'', dropped, before, after, news, listed}
"""
)

# The chat's last step: the game is counted for everyone, with its news, and the group's
# boards have its rated players' ratings (KEYS: the chat's hash, the group's board of the
# game's season, its board of all time, its board of the season before; ARGV: the game,
# RECENT_GAMES, the news (JSON), the season, the boards' TTL, TOP_SIZE, then each rated
# person's user id and rating shown). At a group's first game of a new season, the season
# before's best (names and ratings) are added to the news. Returns the news kept.
_DONE_SCRIPT = (
    _HELPERS
    + """
local key = KEYS[1]
local news = ARGV[3]
local season = ARGV[4]
local last = redis.call('HGET', key, 'se')
if #ARGV > 6 then
  if last and last ~= season then
    local top = redis.call('ZREVRANGE', KEYS[4], 0, tonumber(ARGV[6]) - 1, 'WITHSCORES')
    if #top > 0 then
      local document = cjson.decode(news ~= '' and news or '{"p":[]}')
      local places = {}
      for i = 1, #top, 2 do
        local name = redis.call('HGET', key, 'n:' .. top[i]) or '?'
        places[#places + 1] = {name, tonumber(top[i + 1])}
      end
      document['s'] = tonumber(last)
      document['t'] = places
      news = cjson.encode(document)
    end
  end
  redis.call('HSET', key, 'se', season)
  for i = 7, #ARGV, 2 do
    redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i])
    redis.call('ZADD', KEYS[3], ARGV[i + 1], ARGV[i])
  end
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  redis.call('EXPIRE', KEYS[3], @STATS_TTL_S@)
end
local list = redis.call('HGET', key, 'd') or ''
redis.call('HSET', key, 'd', remembered(list, ARGV[1], tonumber(ARGV[2])))
redis.call('HSET', key, 'o', ARGV[1] .. ' ' .. news)
return news
"""
)

_SUBSTITUTED = {"@BASE@": BASE, "@SCALE@": SCALE, "@MU@": MU, "@SIGMA@": SIGMA}
for _name, _value in _SUBSTITUTED.items():
    _PERSON = _PERSON.replace(_name, repr(_value))
_DONE_SCRIPT = _DONE_SCRIPT.replace("@STATS_TTL_S@", str(STATS_TTL_S))

# /forgetme on a person's hash (KEYS: it; ARGV: now in ms, FORGOTTEN_MARK_S): it keeps only the
# time of the wish, for a while. Returns the groups whose tables had a row of theirs.
_FORGET = """
local groups = redis.call('HGET', KEYS[1], 'gs') or ''
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'f', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return groups
"""


def game_mark(key: str) -> str:
    """A game's key as the hashes remember it: short, the same in every process."""
    return hashlib.blake2b(key.encode(), digest_size=6).hexdigest()


def _numbers(row: Row) -> str:
    return " ".join(str(n) for n in row.numbers())


def _row(raw: bytes | str | None) -> Row:
    text = raw.decode() if isinstance(raw, bytes) else (raw or "")
    return Row.of(int(n) for n in text.split())


def _text(raw: bytes | str | int | None) -> str:
    if isinstance(raw, bytes):
        return raw.decode()
    return "" if raw is None else str(raw)


def _shown_after(rating: tuple[str, Skill] | None) -> int:
    return rating[1].shown if rating is not None else 0


def _last_news(user_id: int, last: str) -> PersonNews:
    """A person's news of a game counted already, from what their hash keeps of their last
    game ("<game> <before> <after> <place>/<players> <codes>...")."""
    parts = last.split()
    if len(parts) < 4:
        return PersonNews(user_id)
    return PersonNews(user_id, int(parts[1]), int(parts[2]), tuple(parts[4:]))


class Stats:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._chat = redis.register_script(_CHAT)
        self._person = redis.register_script(_PERSON)
        self._done = redis.register_script(_DONE_SCRIPT)
        self._forget = redis.register_script(_FORGET)
        #: Whether Redis is taken to know the scripts. A digest is computed here, so a
        #: process counts its first game by digest like any other (Redis keeps scripts loaded
        #: by the processes before it); only Redis's NOSCRIPT (restarted, or a new server)
        #: makes it load them.
        self._loaded = True

    async def count(self, record: GameRecord) -> GameNews | None:
        """Count a finished game in its players' and its group's statistics, ratings, boards
        and achievements, once whoever asks and however often. Its news (ratings moved,
        achievements earned for the first time), whoever counted it; None when this call found
        it counted for everyone already and its news gone (a later game's replaced it).

        Three round trips: the chat's step with the players' ratings read; each person's step;
        the chat's mark with the group's boards, and the global boards."""
        mark = game_mark(record.key)
        chat_key = self._keys.chat_stats(record.chat_id)
        first = await self._first_trip(record, mark, chat_key)
        go_on, kept = first[0]
        if not int(go_on):
            return GameNews.decode(_text(kept)) if _text(kept) else None
        season = season_of(record.ended_ms) if record.ended_ms else 0
        ratings = self._ratings(record, first[1:], season)
        earned = [
            ordered(
                (
                    *line.earned,
                    *earned_over_time(
                        line.after(_row(raw[0])),
                        _shown_after(ratings[i]),
                    ),
                )
            )
            for i, (line, raw) in enumerate(zip(record.lines, first[1:], strict=True))
        ]
        group = str(record.chat_id) if record.group_rows else ""
        answers = await self._second_trip(record, mark, group, ratings, earned)
        people: list[PersonNews] = []
        listed: list[tuple[int, int]] = []
        dropped: list[tuple[int, int]] = []
        for line, answer in zip(record.lines, answers, strict=True):
            said = [_text(part) for part in cast(list[bytes | str], answer)]
            if said[0] == "dup":
                people.append(_last_news(line.user_id, said[1] if len(said) > 1 else ""))
            elif said[0] == "forgotten":
                if record.group_rows:
                    # The chat's step gave them a row again: it goes as /forgetme's did.
                    dropped.append((line.user_id, record.chat_id))
            else:
                _, out, before, after, codes, on_board = said
                if out:
                    dropped.append((line.user_id, int(out)))
                person = PersonNews(line.user_id, int(before), int(after), tuple(codes.split()))
                people.append(person)
                if person.rated and int(on_board):
                    listed.append((line.user_id, person.after))
        news = GameNews(tuple(people))
        kept_news = await self._third_trip(record, mark, chat_key, news, season, listed, dropped)
        return GameNews.decode(kept_news)

    async def _load(self) -> None:
        if not self._loaded:
            for script in (self._chat, self._person, self._done):
                script.sha = await bounded(self._redis.script_load(script.script))
            self._loaded = True

    async def _pipelined(self, build: Callable[[Any], None]) -> list[Any]:
        """One pipeline of scripts by their digest (a pipeline would ask Redis whether it knows
        them each time) and plain commands; when Redis forgot the scripts (restarted), they are
        loaded and the pipeline sent again (each step is idempotent)."""
        for attempt in range(2):
            await self._load()
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    build(pipe)
                    return cast(list[Any], await bounded(pipe.execute()))
            except NoScriptError:
                self._loaded = False
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def _first_trip(self, record: GameRecord, mark: str, chat_key: str) -> list[Any]:
        """The chat's step, and each person's figures and rating as they are."""
        people: list[str | int] = []
        if record.group_rows:
            for line in record.lines:
                people += [line.user_id, line.name, line.outcome, _numbers(line.added)]
        args = [mark, RECENT_GAMES, STATS_TTL_S, int(record.group_rows), *people]
        persons = [self._keys.person_stats(line.user_id) for line in record.lines]
        if isinstance(self._redis, RedisCluster):
            # A cluster client pipelines no scripts: each on its own, all at once (one round
            # trip to each master).
            return list(
                await bounded(
                    asyncio.gather(
                        self._chat(keys=[chat_key], args=args),
                        *(self._redis.hmget(person, ["s", "k"]) for person in persons),
                    )
                )
            )

        def build(pipe: Any) -> None:
            pipe.evalsha(self._chat.sha, 1, chat_key, *args)
            for person in persons:
                pipe.hmget(person, ["s", "k"])

        return await self._pipelined(build)

    @staticmethod
    def _ratings(
        record: GameRecord, read: list[Any], season: int
    ) -> list[tuple[str, Skill] | None]:
        """Each person's rating as read (the stored text) and after the game; None for each
        when the game is not rated."""
        if not record.rated or not season:
            return [None] * len(record.lines)
        stored = [_text(raw[1]) for raw in read]
        skills = [Skill.decode(text) for text in stored]
        places = [line.place or len(record.lines) for line in record.lines]
        after = rated(skills, places, season)
        return [(text, skill) for text, skill in zip(stored, after, strict=True)]

    async def _second_trip(
        self,
        record: GameRecord,
        mark: str,
        group: str,
        ratings: list[tuple[str, Skill] | None],
        earned: list[tuple[str, ...]],
    ) -> list[Any]:
        """Each person's step."""
        steps = [
            (
                self._keys.person_stats(line.user_id),
                self._person_args(mark, line, group, record, ratings[i], earned[i]),
            )
            for i, line in enumerate(record.lines)
        ]
        if isinstance(self._redis, RedisCluster):
            return list(
                await bounded(
                    asyncio.gather(*(self._person(keys=[key], args=args) for key, args in steps))
                )
            )

        def build(pipe: Any) -> None:
            for key, args in steps:
                pipe.evalsha(self._person.sha, 1, key, *args)

        return await self._pipelined(build)

    async def _third_trip(
        self,
        record: GameRecord,
        mark: str,
        chat_key: str,
        news: GameNews,
        season: int,
        listed: list[tuple[int, int]],
        dropped: list[tuple[int, int]],
    ) -> str:
        """The chat's mark (with its news and the group's boards), the global boards, and the
        rows of the people whose list of groups let one go (rare)."""
        chat = record.chat_id
        rated_people: list[int] = []
        if record.rated and season:
            for person in news.people:
                if person.rated:
                    rated_people += [person.user_id, person.after]
        done_keys = [
            chat_key,
            self._keys.group_board(chat, season),
            self._keys.group_board(chat),
            self._keys.group_board(chat, previous_season(season)),
        ]
        done_args = [
            mark,
            RECENT_GAMES,
            news.encode(),
            season,
            SEASON_BOARD_TTL_S,
            TOP_SIZE,
            *rated_people,
        ]
        if not rated_people:
            done_args = done_args[:6]
        others: list[tuple[str, tuple[Any, ...]]] = []
        for user_id, shown in listed:
            for board in (self._keys.global_board(season), self._keys.global_board()):
                others.append(("zadd", (board, {str(user_id): shown})))
                others.append(("zremrangebyrank", (board, 0, -GLOBAL_BOARD_SIZE - 1)))
            others.append(("expire", (self._keys.global_board(season), SEASON_BOARD_TTL_S)))
        for user_id, group in dropped:
            others.append(("hdel", (self._keys.chat_stats(group), f"n:{user_id}", f"s:{user_id}")))
            for board in self._group_boards(group, record.ended_ms):
                others.append(("zrem", (board, str(user_id))))
        if isinstance(self._redis, RedisCluster):
            # The script on its own, the plain commands in a pipeline (one send to each
            # master), at once.
            async def plain() -> None:
                if others:
                    async with self._redis.pipeline() as pipe:
                        for name, args in others:
                            getattr(pipe, name)(*args)
                        await pipe.execute()

            answer, _ = await bounded(
                asyncio.gather(self._done(keys=done_keys, args=done_args), plain())
            )
            return _text(answer)

        def build(pipe: Any) -> None:
            pipe.evalsha(self._done.sha, len(done_keys), *done_keys, *done_args)
            for name, args in others:
                getattr(pipe, name)(*args)

        return _text((await self._pipelined(build))[0])

    def _group_boards(self, chat_id: int, now_ms: int) -> list[str]:
        """A group's boards that may hold a person: of all time, and of the seasons whose
        boards have not expired yet."""
        boards = [self._keys.group_board(chat_id)]
        season = season_of(now_ms) if now_ms else 0
        for _ in range(KEPT_SEASONS if season else 0):
            boards.append(self._keys.group_board(chat_id, season))
            season = previous_season(season)
        return boards

    def _global_boards(self, now_ms: int) -> list[str]:
        boards = [self._keys.global_board()]
        season = season_of(now_ms)
        for _ in range(KEPT_SEASONS):
            boards.append(self._keys.global_board(season))
            season = previous_season(season)
        return boards

    @staticmethod
    def _person_args(
        mark: str,
        line: Line,
        group: str,
        record: GameRecord,
        rating: tuple[str, Skill] | None,
        earned: tuple[str, ...],
    ) -> list[str | int]:
        return [
            mark,
            RECENT_GAMES,
            STATS_TTL_S,
            line.name,
            line.outcome,
            _numbers(line.added),
            group,
            MAX_GROUPS,
            record.ended_ms,
            FORGOTTEN_MARK_S * 1000,
            rating[0] if rating is not None else "",
            rating[1].encode() if rating is not None else "",
            day_of(record.ended_ms),
            RATED_GAMES_PER_DAY,
            " ".join(earned),
            f"{line.place}/{len(record.lines)}",
        ]

    async def person(self, user_id: int) -> Row | None:
        """A person's figures across groups (None: nothing counted)."""
        raw = await bounded(self._redis.hget(self._keys.person_stats(user_id), _ROW.decode()))
        return None if raw is None else _row(cast(bytes, raw))

    async def group(self, chat_id: int) -> dict[int, tuple[str, Row]]:
        """A group's table: each player's latest name and figures, by user id."""
        raw = await bounded(self._redis.hgetall(self._keys.chat_stats(chat_id)))
        names: dict[int, str] = {}
        rows: dict[int, Row] = {}
        for field, value in cast(dict[bytes, bytes], raw).items():
            kind, _, user = field.partition(b":")
            if not user:
                continue
            if kind == _NAME:
                names[int(user)] = _text(value)
            elif kind == _ROW:
                rows[int(user)] = _row(value)
        return {user_id: (names.get(user_id, ""), row) for user_id, row in rows.items()}

    async def forget_person(self, user_id: int, now_ms: int) -> None:
        """/forgetme: a person's statistics, their rows in the groups' tables, their next-game
        sign-ups in those groups, their settings (language, /play rules), where they were dealt
        lately, their Mini App requests and their reply budget go. Their hash
        keeps only the time of the wish, for ``FORGOTTEN_MARK_S``: a game that ended before it
        and is counted only now (a late try) is not counted for them."""
        person = self._keys.person_stats(user_id)
        # At once, so that a game counted meanwhile leaves no row in a group not listed.
        raw = await bounded(self._forget(keys=[person], args=[now_ms, FORGOTTEN_MARK_S]))
        groups = _text(raw).split()
        async with self._redis.pipeline(transaction=False) as pipe:
            # One DEL a key: on a Redis Cluster they are of different slots.
            for key in (
                self._keys.chat_stats(user_id),
                self._keys.user(user_id),
                self._keys.played_places(user_id),
                self._keys.app_requests(user_id),
                self._keys.replies(user_id),
                # Their private chat's message budget (and what it held back), and its
                # settings: the rules of their games against the computer (/settings there).
                self._keys.bucket(user_id),
                self._keys.group(user_id),
            ):
                pipe.delete(key)
            for group in groups:
                # Their row, and the group's last game's news (it names its players).
                pipe.hdel(self._keys.chat_stats(int(group)), f"n:{user_id}", f"s:{user_id}", "o")
                pipe.srem(self._keys.pings(int(group)), user_id)
                for board in self._group_boards(int(group), now_ms):
                    pipe.zrem(board, str(user_id))
            for board in self._global_boards(now_ms):
                pipe.zrem(board, str(user_id))
            await bounded(pipe.execute())

    async def profile(self, user_id: int, now_ms: int) -> Profile | None:
        """A person's standing (None: nothing counted for them)."""
        person = self._keys.person_stats(user_id)
        season = self._keys.global_board(season_of(now_ms))
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hmget(person, ["n", "s", "k", "a", "lo", "x"])
            pipe.zrevrank(season, str(user_id))
            (name, row, skill, codes, last, hidden), rank = await bounded(pipe.execute())
        if row is None and hidden is None:
            return None
        last_news = _last_news(user_id, _text(last)) if last else None
        place, _, players = [*_text(last).split(), "", "", "", "0/0"][3].partition("/")
        return Profile(
            name=_text(name),
            # Nothing counted but their setting (they left the global board before playing).
            row=_row(row) if row is not None else Row(),
            skill=Skill.decode(_text(skill)) if skill else None,
            achievements=ordered(tuple(_text(codes).split())),
            season_rank=None if rank is None else int(rank) + 1,
            hidden=hidden is not None,
            last=last_news,
            last_place=int(place or 0),
            last_players=int(players or 0),
        )

    async def board(
        self, chat_id: int | None, season: int | None, size: int = TOP_SIZE
    ) -> list[tuple[str, int]]:
        """A rating board, best first: a group's (``chat_id``) or the global one (None), of a
        season or of all time (None); display names and ratings."""
        key = (
            self._keys.global_board(season)
            if chat_id is None
            else self._keys.group_board(chat_id, season)
        )
        # A global board outlives the hashes of people who stopped playing (a year): they are
        # left out, so a few more are read.
        most = size if chat_id is not None else 2 * size
        top = cast(
            list[tuple[bytes, float]],
            await bounded(self._redis.zrevrange(key, 0, most - 1, withscores=True)),
        )
        if not top:
            return []
        users = [_text(member) for member, _ in top]
        if chat_id is not None:
            raw = await bounded(
                self._redis.hmget(self._keys.chat_stats(chat_id), [f"n:{u}" for u in users])
            )
            names = [_text(name) for name in cast(list[bytes | None], raw)]
        else:
            async with self._redis.pipeline(transaction=False) as pipe:
                for user in users:
                    pipe.hget(self._keys.person_stats(int(user)), "n")
                names = [_text(name) for name in await bounded(pipe.execute())]
        ranked = [(name, int(score)) for name, (_, score) in zip(names, top, strict=True) if name]
        return ranked[:size]

    async def set_hidden(self, user_id: int, hidden: bool, now_ms: int) -> None:
        """A person's setting: left off the global boards (they are taken off at once) or
        listed again from their next rated game."""
        person = self._keys.person_stats(user_id)
        if not hidden:
            await bounded(self._redis.hdel(person, "x"))
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(person, "x", "1")
            pipe.expire(person, STATS_TTL_S, nx=True)
            for board in self._global_boards(now_ms):
                pipe.zrem(board, str(user_id))
            await bounded(pipe.execute())

    async def memory(self, user_id: int) -> int:
        """Bytes Redis uses for a person's hash (MEMORY USAGE), for the benchmark."""
        used = await bounded(self._redis.memory_usage(self._keys.person_stats(user_id)))
        return int(used or 0)
