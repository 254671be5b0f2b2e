"""What a place should show, drawn from its stored session alone (pure).

The table in the group (the lobby, the game, or its result), each person's hand in their
private chat, and the game's lines (reveals and passes) from the session's log
(``tgcheat.table.told``), each in its reader's language. Drawn the same way every time from the
same session: nothing here reads the wall clock (the seconds left to answer last cards are
counted from the moment the game last changed, ``Session.changed_ms``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from tgcheat.bot import views
from tgcheat.bot.delivery.plan import Chat, Desired, WantedLine, WantedSlot
from tgcheat.engine.events import ChallengeResolved, TriggerPulled
from tgcheat.engine.state import GameState, Phase
from tgcheat.i18n import Translator, translator
from tgcheat.store.send_budget import Priority
from tgcheat.table.computers import is_computer
from tgcheat.table.place import Place
from tgcheat.table.session import Session
from tgcheat.table.standing import GameNews
from tgcheat.table.told import Told

#: The table's slot name; a hand's is ``hand_slot(user_id)``.
TABLE = "table"


def hand_slot(user_id: int) -> str:
    return f"hand:{user_id}"


def hand_epoch(session: Session, user_id: int) -> str:
    """The epoch of a person's hand message: a new one each time it comes back as a
    notification (``Told.hand_epochs``)."""
    return f"{session.game_id}:{session.told.hand_epoch(user_id)}"


@dataclass(frozen=True, slots=True)
class Drawing:
    """What a place's messages are drawn with besides the session."""

    bot_username: str
    #: The Mini App's address, when the bot serves it (hands then offer "🃏 Open cards").
    app_url: str | None = None
    #: What counting the finished game brought its players (their results show it).
    news: GameNews | None = None


def desired(
    session: Session,
    drawing: Drawing,
    lines_after: int = 0,
    hand_of: int | None = None,
    watching: Mapping[int, int] | None = None,
) -> Desired:
    """The messages ``session`` should be shown by (its game's log: ``session.told``); the
    log's lines up to ``lines_after`` are known to be posted, and are not drawn. ``hand_of``:
    only that person's hand (a change of nothing else: their pick). ``watching``: the players
    whose Mini App shows the game now, each with when that report runs out (ms): their hand
    messages are held (no edits, no turn message: the page shows it) until it does."""
    told = session.told
    state = session.game
    watching = _watching(state, watching or {})
    held = frozenset(hand_slot(user_id) for user_id in watching)
    again_ms = min(watching.values(), default=0)
    if hand_of is not None:
        hands = (
            _hand_slots(session, state, told, drawing, hand_of, watching)
            if state is not None
            else []
        )
        return Desired(tuple(hands), session.game_id, partial=True, held=held, again_ms=again_ms)
    # A game that ended without its group shows nothing more there.
    table = None if session.without_group or session.quick else _table_slot(session, told, drawing)
    slots = [table] if table is not None else []
    lines: tuple[WantedLine, ...] = ()
    if state is not None and session.quick:
        slots += _quick_table_slots(session, state, told, drawing)
        lines = _quick_lines(session, state, told)
    if state is not None:
        slots += _hand_slots(session, state, told, drawing, watching=watching)
        if not session.without_group and not session.quick:
            lines = _lines(session, state, told, lines_after)
    return Desired(
        tuple(slots),
        session.game_id,
        lines,
        held=held,
        again_ms=again_ms,
    )


def _watching(state: GameState | None, watching: Mapping[int, int]) -> dict[int, int]:
    """The players of a live game among ``watching``: a finished game's hands are shown in
    the chat (its result), and nobody else has a hand."""
    if state is None or state.phase is Phase.FINISHED:
        return {}
    return {
        p.user_id: watching[p.user_id]
        for p in state.players
        if p.user_id in watching and not p.left
    }


def _table_slot(session: Session, told: Told, drawing: Drawing) -> WantedSlot | None:
    tr = translator(session.language)
    chat = session.place
    # The lobby's message becomes the game's table (an edit, not a new message).
    epoch = f"{session.game_id}:{told.table_epoch if told.game_id == session.game_id else 0}"
    if session.lobby is not None:
        view = views.lobby_view(
            tr, session, session.lobby, drawing.bot_username, app=drawing.app_url is not None
        )
        return WantedSlot(TABLE, chat, epoch, view, edit_priority=Priority.LATER)
    state = session.game
    if state is None:
        # A lobby closed without a game.
        view = views.lobby_closed_view(tr, expired=session.lobby_expired)
        return WantedSlot(TABLE, chat, epoch, view, edit_priority=Priority.LATER)
    view = _game_table_view(tr, session, state, drawing)
    return _game_table_slot(TABLE, chat, epoch, view, state)


def _game_table_view(
    tr: Translator, session: Session, state: GameState, drawing: Drawing
) -> views.View:
    return views.table_view(
        tr,
        session,
        state,
        drawing.bot_username,
        session.changed_ms or None,
        drawing.news,
        app=drawing.app_url is not None,
    )


def _game_table_slot(
    name: str, chat: Chat, epoch: str, view: views.View, state: GameState
) -> WantedSlot:
    """A game's table in ``chat``."""
    # Last cards to answer are what the players must see to act; any other edit may wait.
    edit = Priority.MUST if state.phase is Phase.FINAL_CHECK else Priority.TABLE
    # A live game's table comes back below others' messages; a result stays where it is.
    live = state.phase is not Phase.FINISHED
    return WantedSlot(name, chat, epoch, view, edit_priority=edit, stays_last=live)


def quick_table_slot(user_id: int) -> str:
    """The slot of a quick game's table in one person's private chat."""
    return f"{TABLE}:{user_id}"


def _quick_players(state: GameState) -> list[int]:
    """The people at a quick table: each is shown the table in their private chat."""
    return [p.user_id for p in state.players if not is_computer(p.user_id)]


def _quick_table_slots(
    session: Session, state: GameState, told: Told, drawing: Drawing
) -> list[WantedSlot]:
    """A quick game's table, in each person's private chat and language (no group has it):
    drawn once per language."""
    epoch = f"{session.game_id}:{told.table_epoch if told.game_id == session.game_id else 0}"
    drawn: dict[str, views.View] = {}
    slots = []
    for user_id in _quick_players(state):
        language = session.language_of(user_id)
        if language not in drawn:
            drawn[language] = _game_table_view(translator(language), session, state, drawing)
        slot_name = quick_table_slot(user_id)
        slots.append(_game_table_slot(slot_name, Place(user_id), epoch, drawn[language], state))
    return slots


def _quick_lines(session: Session, state: GameState, told: Told) -> tuple[WantedLine, ...]:
    """A quick game's lines (reveals, passes, pulls), in each person's chat and language
    (drawn once per language); those posted already are skipped by the plan
    (``Shown.last_line`` of each chat)."""
    drawn: dict[str, tuple[WantedLine, ...]] = {}
    lines: list[WantedLine] = []
    for user_id in _quick_players(state):
        language = session.language_of(user_id)
        if language not in drawn:
            drawn[language] = _lines(session, state, told, 0, language=language)
        lines += (dataclasses.replace(line, chat=Place(user_id)) for line in drawn[language])
    return tuple(lines)


def _hand_slots(
    session: Session,
    state: GameState,
    told: Told,
    drawing: Drawing,
    only: int | None = None,
    watching: Mapping[int, int] | None = None,
) -> list[WantedSlot]:
    slots = []
    for seat, player in enumerate(state.players):
        user_id = player.user_id
        if is_computer(user_id) or (only is not None and user_id != only):
            # A computer has no chat, and nobody else may see its cards.
            continue
        if watching and user_id in watching:
            # Held: the Mini App shows this player their hand and their turn.
            continue
        tr = translator(session.language_of(user_id))
        view = views.hand_view(
            tr,
            session,
            state,
            seat,
            session.place_title,
            session.picked(user_id),
            app_url=drawing.app_url,
            news=drawing.news.of(user_id) if drawing.news is not None else None,
        )
        awaited = state.phase is not Phase.FINISHED and seat == state.turn
        # Cards just picked are an answer to the person's own tap, whichever sync shows them.
        edit = Priority.ALWAYS if session.picked(user_id) else Priority.LATER
        slots.append(
            WantedSlot(
                hand_slot(user_id),
                user_id,
                hand_epoch(session, user_id),
                view,
                priority=Priority.MUST if awaited else Priority.LATER,
                edit_priority=edit,
                keep_former=True,
            )
        )
    return slots


def _lines(
    session: Session,
    state: GameState,
    told: Told,
    after: int,
    language: str | None = None,
) -> tuple[WantedLine, ...]:
    """The log's lines after ``after``, for the place's chat, in the place's language (or
    ``language``)."""
    tr = translator(language or session.language)
    lines = []
    for seq, event in told.lines:
        if seq <= after:
            continue
        if isinstance(event, ChallengeResolved):
            view = views.reveal_view(tr, state, event)
        elif isinstance(event, TriggerPulled):
            view = views.View(views.pull_view(tr, state, event))
        else:
            view = views.View(views.passed_view(tr, state, event))
        lines.append(WantedLine(seq, session.place, view))
    return tuple(lines)
