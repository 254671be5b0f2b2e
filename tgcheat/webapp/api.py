"""The Mini App's HTTP side, served by the web process under ``/app``: the page, a small JSON
API and a stream of live updates.

- ``GET /app`` the page; ``GET /app/static/...`` its script and style.
- ``GET /app/api/state?place=K`` the game at place ``K`` as the asker sees it.
- ``GET /app/api/events?place=K`` server-sent events: the state at once, then again after each
  change of the place (with the reveals it made), within a second, whichever process or clock
  made it.
- ``POST /app/api/act`` a play, Cheat!, I believe you, a pass or a vote; joining a lobby.
- ``POST /app/api/quick`` the home's ⚡ Quick game, or 🚪 Stop waiting (as /quick).
- ``POST /app/api/seen`` the page is visible, or hidden (``tgcheat.store.watching``): while a
  player's page is visible, their private chat gets no hand edits and no turn message.

Who sees what: a player sees the table and their own hand; a member of the place's group who
does not play (asked of Telegram, remembered a minute), and a player who is out, see the table
only (seats, counts, the pile's size, claims, reveals, the result), never a hand nor a card not
turned over; anyone else is told only that they do not play there.

Every API call carries Telegram's signed initData in ``Authorization: tma <initData>``
(tgcheat.webapp.initdata); a missing, forged or expired one is answered 401 and changes
nothing. An action carries a request id of the page's own as well, which is used once: the
same signed request sent again (replayed) is answered 401 too.

An action goes the way of a button press: ``PlayHandlers.act``, that is the same table
transition inside the same compare-and-set, refused or stale in the same cases, and published
to the chats as any press is. A refusal is answered 409 with the reason in the player's
language, as the press's pop-up says it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Any

import orjson
from redis.asyncio import Redis
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from telegram.error import TelegramError

from tgcheat.bot import views
from tgcheat.bot.handlers import Routes
from tgcheat.bot.handlers.inline import share_results
from tgcheat.bot.handlers.quick import Seeking, quick_answer_text, quick_name
from tgcheat.bot.handlers.shell import REFUSALS, SELECTION_TOO_LONG, Answer, Asker, Command
from tgcheat.bot.sender import ChatFlooded, TopicGone
from tgcheat.engine.cards import Rank
from tgcheat.engine.game import ActionRefused
from tgcheat.engine.state import Phase
from tgcheat.i18n import Translator
from tgcheat.store.changes import Reveal
from tgcheat.store.games import Loaded
from tgcheat.store.quick import Asked, Mode
from tgcheat.table.commands import (
    Believe,
    CallCheat,
    GameCommand,
    PassTurn,
    PlayCards,
    VoteOnPass,
)
from tgcheat.table.place import Place
from tgcheat.table.refusals import SessionRefused
from tgcheat.table.session import Session
from tgcheat.webapp.bodies import BODY_TIMEOUT_S, BodyRefused, read_body
from tgcheat.webapp.initdata import MAX_AGE_S, InitDataRefused, WebAppUser, verify
from tgcheat.webapp.live import ChangeListener, SharedReads
from tgcheat.webapp.streams import RETRY_AFTER_S, OpenStreams
from tgcheat.webapp.view import (
    Json,
    no_game_json,
    outsider_json,
    profile_json,
    reveals_json,
    state_json,
    takes_part,
)

log = logging.getLogger(__name__)

APP_PATH = "/app"
#: The Mini App's Redis reads in flight at once, at most: a burst of pages opening together (a
#: web process restarted, every open page connecting again) waits its turn instead of taking
#: every connection of the pool (redis-py's holds 100) from the webhook and the clock.
READS_AT_ONCE = 16
#: The largest action body read: an action is a few hundred bytes (a play of 50 cards well
#: under 2 KB).
MAX_ACTION_BYTES = 16 * 1024
#: A comment line on an idle event stream, so that proxies keep it open (s).
KEEPALIVE_S = 15.0
#: How long Telegram's answer that a person is (or is not) a group's member is kept (s), and
#: for how many people and groups at most (the oldest forgotten first).
MEMBERSHIP_KEPT_S = 60.0
MEMBERSHIPS_KEPT = 4096
#: The largest visibility report read (its initData rides in the body: a page that is closing
#: sends it as a beacon, which cannot carry a header).
MAX_SEEN_BYTES = 8 * 1024
#: The page's id of a request: letters, digits, "-" and "_".
_REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
_STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}


def _asset(name: str) -> bytes:
    return resources.files("tgcheat.webapp").joinpath("static", name).read_bytes()


class MiniApp:
    def __init__(
        self, routes: Routes, redis: Redis, bot_token: str, max_age_s: int = MAX_AGE_S
    ) -> None:
        self.routes = routes
        self.shell = routes.shell
        self.bot_token = bot_token
        self.max_age_s = max_age_s
        store = self.shell.store
        self.listener = ChangeListener(redis, store.keys.changes)
        #: The state of a place, read once for all the streams a change wakes at once.
        self.reads: SharedReads[Loaded] = SharedReads(self._read)
        self._reading = asyncio.Semaphore(READS_AT_ONCE)
        #: How long an action's body may take to arrive (s).
        self.body_timeout_s = BODY_TIMEOUT_S
        self.streams = OpenStreams()
        #: The time in seconds, for the initData's age (tests move it).
        self.wall_clock: Callable[[], float] = time.time
        self._assets = {name: _asset(name) for name in (*_STATIC, "index.html")}
        #: Telegram's answers to "is this person a member of this group", for a minute.
        self._members: OrderedDict[tuple[int, int], tuple[bool, float]] = OrderedDict()

    def routes_list(self) -> list[BaseRoute]:
        return [
            Route(APP_PATH, self.page, methods=["GET"]),
            Route(f"{APP_PATH}/static/{{name}}", self.static, methods=["GET"]),
            Route(f"{APP_PATH}/api/state", self.state, methods=["GET"]),
            Route(f"{APP_PATH}/api/events", self.events, methods=["GET"]),
            Route(f"{APP_PATH}/api/act", self.act, methods=["POST"]),
            Route(f"{APP_PATH}/api/profile", self.profile, methods=["GET"]),
            Route(f"{APP_PATH}/api/share", self.share, methods=["POST"]),
            Route(f"{APP_PATH}/api/seen", self.seen, methods=["POST"]),
            Route(f"{APP_PATH}/api/quick", self.quick, methods=["POST"]),
        ]

    # --- the page ------------------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        return Response(
            self._assets["index.html"],
            media_type="text/html; charset=utf-8",
            headers={"Cache-Control": "no-cache"},
        )

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return Response("not found", status_code=404)
        return Response(
            self._assets[name], media_type=_STATIC[name], headers={"Cache-Control": "no-cache"}
        )

    # --- who asks ------------------------------------------------------------------------------

    def _user(self, request: Request) -> WebAppUser:
        scheme, _, data = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "tma":
            raise InitDataRefused("no initData")
        return verify(data, self.bot_token, self.wall_clock(), self.max_age_s)

    async def _translator(self, user: WebAppUser) -> Translator:
        async with self._reading:
            return await self.shell.language_of(Asker(user.user_id, user.language_code))

    async def _read(self, place: Place) -> Loaded:
        async with self._reading:
            return await self.shell.store.read(place)

    async def _state(self, tr: Translator, user: WebAppUser, place: Place) -> Json:
        loaded = await self._read(place)
        member = await self._may_watch(place, loaded.session, user.user_id)
        return self._state_of(tr, user, loaded, member)

    def _state_of(
        self, tr: Translator, user: WebAppUser, loaded: Loaded, member: bool = False
    ) -> Json:
        return state_json(
            tr,
            loaded.session,
            loaded.version,
            user.user_id,
            self.shell.bot_username,
            self.shell.clock(),
            member=member,
        )

    async def _may_watch(self, place: Place, session: Session | None, user_id: int) -> bool:
        """Whether a person who does not play at ``place`` may watch its game: a member of
        its group (asked of Telegram when not known from the last minute). Only for a place
        with a game or a lobby: an outsider's request about any other costs no question."""
        if session is None or (session.game is None and session.lobby is None):
            return False
        if takes_part(session, user_id) or place.chat_id > 0 or place.quick:
            # A game against the computer, or a quick game: no group to be a member of.
            return False
        key = (place.chat_id, user_id)
        now = time.monotonic()
        known = self._members.get(key)
        if known is not None and known[1] > now:
            return known[0]
        try:
            member = await self.shell.is_member(place.chat_id, user_id)
        except Exception as error:
            # Telegram could not say (a flood wait, a network error): not for now.
            log.info("Mini App: membership of %s in %s unknown: %s", user_id, place, error)
            return False
        self._members[key] = (member, now + MEMBERSHIP_KEPT_S)
        self._members.move_to_end(key)
        while len(self._members) > MEMBERSHIPS_KEPT:
            self._members.popitem(last=False)
        return member

    # --- the API -------------------------------------------------------------------------------

    async def _asked(
        self, request: Request
    ) -> tuple[WebAppUser, Translator, Place | None] | Response:
        """Who asks (their initData checked), in their language, about which game (None: the
        page named none and they play in none); or the answer refusing the request."""
        try:
            user = self._user(request)
        except InitDataRefused as refused:
            return _unauthorized(refused)
        named = request.query_params.get("place", "")
        if named:
            place = _place(named)
            if place is None:
                return _json({"error": "place"}, 400)
        else:
            place = await self._found(user)
        return user, await self._translator(user), place

    async def _found(self, user: WebAppUser) -> Place | None:
        """The game of a page opened without one named: the Mini App link's start parameter
        (signed with the initData), else the game the person was dealt into last that is
        still on and that they have not left (the most recent one, when they play in
        several: the page shows one game)."""
        if user.start_param and (place := _place(user.start_param)) is not None:
            return place
        for place in await self.shell.store.played_places.recent(user.user_id):
            session = (await self._read(place)).session
            game = session.game if session is not None else None
            if game is None or game.phase is Phase.FINISHED:
                continue
            seat = game.seat_of(user.user_id)
            if seat is not None and not game.players[seat].left:
                return place
        return None

    async def state(self, request: Request) -> Response:
        asked = await self._asked(request)
        if isinstance(asked, Response):
            return asked
        user, tr, place = asked
        if place is None:
            return _json(await self._home(tr, user))
        return _json(await self._state(tr, user, place))

    async def _home(self, tr: Translator, user: WebAppUser) -> Json:
        """The page of someone in no game: whether they wait for a quick one."""
        async with self._reading:
            waiting = await self.shell.store.quick.waiting_with(user.user_id)
        return no_game_json(tr, waiting)

    async def quick(self, request: Request) -> Response:
        """The home's ⚡ Quick game (``{"join": true}``) and 🚪 Stop waiting (``false``): the
        way of /quick (``QuickHandlers.ask``), for the person the initData names. Answers what
        the page shows next: the game, when the queue made a table at once, else the home."""
        try:
            user = self._user(request)
        except InitDataRefused as refused:
            return _unauthorized(refused)
        try:
            raw = await read_body(request, MAX_SEEN_BYTES, self.body_timeout_s)
            body: Any = orjson.loads(raw)
            join = body["join"]
            if not isinstance(join, bool):
                raise ValueError("not a choice")
        except BodyRefused as refused:
            return _json({"error": "body"}, refused.status)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return _json({"error": "request"}, 400)
        tr = await self._translator(user)
        quick = self.routes.quick
        seeking = Seeking(user.user_id, quick_name(user.full_name, tr), tr)
        answer = await quick.ask(seeking, Mode.JOIN if join else Mode.LEAVE)
        try:
            await quick.match_due()
        except ChatFlooded as flooded:
            await self.shell.held_back(flooded)
        place = await self._found(user)
        state = await self._state(tr, user, place) if place is not None else None
        if state is None or "seats" not in state:
            state = await self._home(tr, user)
        if answer.outcome in (Asked.PLAYING, Asked.FULL):
            return _json({"refused": quick_answer_text(tr, answer)} | state, 409)
        return _json(state)

    async def events(self, request: Request) -> Response:
        asked = await self._asked(request)
        if isinstance(asked, Response):
            return asked
        user, tr, place = asked
        if self.streams.full:
            return Response(
                "busy", status_code=503, headers={"Retry-After": str(RETRY_AFTER_S), **NO_STORE}
            )
        if place is None:
            stream = self._idle(user, await self._home(tr, user))
        else:
            session = (await self._read(place)).session
            member = await self._may_watch(place, session, user.user_id)
            if not member and not takes_part(session, user.user_id):
                # Watched for those who take part, and the group's members: an outsider
                # learns nothing of when it changes.
                stream = self._idle(user, outsider_json(tr))
            else:
                stream = self._stream(tr, user, place, member)
        return StreamingResponse(
            stream,
            media_type="text/event-stream",
            headers={"X-Accel-Buffering": "no", **NO_STORE},
        )

    async def _stream(
        self, tr: Translator, user: WebAppUser, place: Place, member: bool
    ) -> AsyncIterator[bytes]:
        # Counted from its first step (a stream whose client went away before it began costs
        # nothing to release), and released in the same ``finally``.
        ticket = self.streams.open(user.user_id)
        if ticket is None:
            return
        # Subscribed before the first read: a change made in between wakes the watcher.
        try:
            watcher = await self.listener.watch(place)
        except BaseException:
            self.streams.release(ticket)
            raise
        ticket.wake = watcher.woken.set
        try:
            sent = -1
            reveals: list[Reveal] = []
            while not ticket.closed:
                loaded = await self.reads.get(place)
                if loaded.version < watcher.version:
                    # The shared read had started before the change this stream was told of.
                    loaded = await self.reads.get(place)
                state = self._state_of(tr, user, loaded, member)
                game = loaded.session.game if loaded.session is not None else None
                if reveals and "seats" in state and game is not None:
                    state["reveals"] = reveals_json(tr, game, reveals)
                if state["v"] != sent or "reveals" in state:
                    sent = state["v"]
                    yield b"data: " + orjson.dumps(state) + b"\n\n"
                try:
                    await asyncio.wait_for(watcher.woken.wait(), KEEPALIVE_S)
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                watcher.woken.clear()
                reveals = watcher.take_reveals()
        finally:
            self.listener.forget(watcher)
            self.streams.release(ticket)

    async def _idle(self, user: WebAppUser, state: Json) -> AsyncIterator[bytes]:
        """A stream that says ``state`` once and stays open (the page would only open it
        again); opened anew, it looks again."""
        ticket = self.streams.open(user.user_id)
        if ticket is None:
            return
        closed = asyncio.Event()
        ticket.wake = closed.set
        try:
            yield b"data: " + orjson.dumps(state) + b"\n\n"
            while not ticket.closed:
                try:
                    await asyncio.wait_for(closed.wait(), KEEPALIVE_S)
                except TimeoutError:
                    yield b": keepalive\n\n"
        finally:
            self.streams.release(ticket)

    async def act(self, request: Request) -> Response:
        try:
            user = self._user(request)
        except InitDataRefused as refused:
            return _unauthorized(refused)
        try:
            raw = await read_body(request, MAX_ACTION_BYTES, self.body_timeout_s)
        except BodyRefused as refused:
            return _json({"error": "body"}, refused.status)
        try:
            body: Any = orjson.loads(raw)
            place = _place(str(body["place"]))
            request_id = str(body["request"])
            joining = body["op"] == "join"
            command = None if joining else _command(user.user_id, body, self.shell.clock())
            game_id = "" if joining else str(body["game"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return _json({"error": "request"}, 400)
        if place is None or not _REQUEST_ID.fullmatch(request_id):
            return _json({"error": "request"}, 400)
        requests = self.shell.store.app_requests
        now_s = self.wall_clock()
        if await requests.carried_out(user.user_id, user.hash, request_id, now_s):
            return _unauthorized(InitDataRefused("replayed"))
        tr = await self._translator(user)
        try:
            if command is None:
                await self._join(place, user, tr)
            else:
                await self._act(place, game_id, command, user)
        except REFUSALS as refusal:
            # Not remembered: sent again, it is refused again (the game has not changed for it).
            text = _refusal_text(tr, refusal)
            return _json({"refused": text} | await self._state(tr, user, place), 409)
        # Remembered for as long as its initData is accepted.
        ttl = self.max_age_s - int(now_s - user.auth_date) + 60
        await requests.remember(user.user_id, user.hash, request_id, now_s, ttl)
        return _json(await self._state(tr, user, place))

    async def profile(self, request: Request) -> Response:
        """The person's profile page (/profile's lines, as plain text, in their language)."""
        try:
            user = self._user(request)
        except InitDataRefused as refused:
            return _unauthorized(refused)
        tr = await self._translator(user)
        profile = await self.shell.store.stats.profile(user.user_id, self.shell.clock())
        return _json(profile_json(tr, profile, user.first_name))

    async def share(self, request: Request) -> Response:
        """A card of the person's profile kept by Telegram (savePreparedInlineMessage) for the
        page to share into a chat they pick (``shareMessage``): its id. Each share is one of
        the person's replies (``Shell.may_reply``): a page that asks in a loop is refused."""
        try:
            user = self._user(request)
        except InitDataRefused as refused:
            return _unauthorized(refused)
        shell = self.shell
        if not await shell.may_reply(Asker(user.user_id, user.language_code)):
            return _json({"error": "busy"}, 429)
        tr = await self._translator(user)
        profile = await shell.store.stats.profile(user.user_id, shell.clock())
        results = share_results(tr, profile, "profile", shell.bot_username)
        try:
            prepared = await shell.sender.prepare_inline(user.user_id, results[0])
        except TelegramError as error:
            log.info("a card of %s not prepared: %s", user.user_id, error)
            return _json({"error": "telegram"}, 502)
        return _json({"id": prepared})

    async def _join(self, place: Place, user: WebAppUser, tr: Translator) -> None:
        """Join the place's lobby from the page, as the Join link does in the private chat:
        the group's members only (asked of Telegram), and the bot may write to them (the page
        asked Telegram for it first)."""
        command = Command(
            update_id=None,
            asker=Asker(user.user_id, user.language_code),
            chat_id=user.user_id,
            in_group=False,
            title="",
            name=user.first_name,
            args=(),
        )
        try:
            await self.routes.lobby.join_by_link(command, place)
        except ChatFlooded as flooded:
            await self.shell.held_back(flooded)

    async def seen(self, request: Request) -> Response:
        """The page is visible (``{"visible": true}``, again every ``REPORT_EVERY_MS``) or
        hidden or closing (``false``; a closing page sends it as a beacon, the initData in
        the body as ``init``). Only a player seated in the place's live game is counted; a
        player whose page was visible and is not any more gets the chat back at once: the
        place is synced within the request (their turn's message, their hand)."""
        try:
            raw = await read_body(request, MAX_SEEN_BYTES, self.body_timeout_s)
            body: Any = orjson.loads(raw)
            visible = body["visible"]
            place = _place(str(body["place"]))
            if not isinstance(visible, bool) or place is None:
                raise ValueError("not a report")
        except BodyRefused as refused:
            return _json({"error": "body"}, refused.status)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return _json({"error": "request"}, 400)
        scheme, _, data = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "tma":
            data = body.get("init") if isinstance(body.get("init"), str) else ""
        try:
            user = verify(data, self.bot_token, self.wall_clock(), self.max_age_s)
        except InitDataRefused as refused:
            return _unauthorized(refused)
        session = (await self._read(place)).session
        game = session.live_game if session is not None else None
        seat = game.seat_of(user.user_id) if game is not None else None
        if game is None or seat is None or game.players[seat].left:
            # Nothing kept for anyone else: a stranger's reports leave nothing.
            return Response(status_code=204, headers=NO_STORE)
        watching = self.shell.store.watching
        if visible:
            await watching.visible(place, user.user_id, self.shell.clock())
        elif await watching.hidden(place, user.user_id):
            try:
                await self.shell.show(place)
            except ChatFlooded as flooded:
                await self.shell.held_back(flooded)
            except TopicGone as gone:
                await self.shell.end_topic(gone.place)
        return Response(status_code=204, headers=NO_STORE)

    async def _act(
        self, place: Place, game_id: str, command: GameCommand, user: WebAppUser
    ) -> None:
        """The press's own path (``PlayHandlers.act``); a flood wait met while showing it is
        no failure, as for a press."""
        try:
            await self.routes.play.act(place, game_id, command, update_id=None)
        except ChatFlooded as flooded:
            await self.shell.held_back(flooded)
        except TopicGone as gone:
            await self.shell.end_topic(gone.place)


def _refusal_text(tr: Translator, refusal: Exception) -> str:
    """A refusal in the words of a press's pop-up (``Shell.refuse``)."""
    if isinstance(refusal, SessionRefused | ActionRefused):
        return views.refusal_text(tr, refusal.reason)
    if isinstance(refusal, Answer):
        return tr._(refusal.message).format(**refusal.fields)
    return tr._(SELECTION_TOO_LONG)


def _command(user_id: int, body: dict[str, Any], now_ms: int) -> GameCommand:
    """The table's command for an action of the page (ValueError: not one)."""
    op = body["op"]
    match op:
        case "play":
            cards = body["cards"]
            if not isinstance(cards, dict) or not cards:
                raise ValueError("no cards")
            selected = Counter({Rank.from_code(k): _count(n) for k, n in cards.items()})
            return PlayCards(user_id, _int(body["plays"]), selected, Rank.from_code(body["rank"]))
        case "cheat":
            return CallCheat(user_id, _int(body["claim"]), now_ms)
        case "believe":
            return Believe(user_id, _int(body["claim"]))
        case "pass":
            return PassTurn(user_id, _int(body["plays"]))
        case "yes" | "no":
            return VoteOnPass(user_id, _int(body["plays"]), op == "yes")
    raise ValueError(f"no such action: {op!r}")


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 31:
        raise ValueError("not a number")
    return value


def _count(value: object) -> int:
    count = _int(value)
    if not 1 <= count <= 64:
        raise ValueError("not a card count")
    return count


def _place(key: str) -> Place | None:
    """A place as the page names it: its key ("-100123", "-100123:5"), or the Mini App link's
    start parameter, which cannot hold ":" ("-100123_5")."""
    try:
        return Place.from_key(key.replace("_", ":"))
    except ValueError:
        return None


#: Every answer of the API may carry a hand: no browser or proxy keeps it.
NO_STORE = {"Cache-Control": "no-store"}


def _json(data: Json, status: int = 200) -> Response:
    return Response(
        orjson.dumps(data), status_code=status, media_type="application/json", headers=NO_STORE
    )


def _unauthorized(refused: InitDataRefused) -> Response:
    log.info("Mini App call refused: %s", refused)
    return _json({"error": "unauthorized"}, 401)
