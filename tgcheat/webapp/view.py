"""What the Mini App shows one player: their hand, the table, and what they may do now, as
JSON, every text in their language.

The texts are the chat's own (the table's lines, the hand's prompt, the buttons' labels): one
catalog, and the Mini App reads like the bot. They are plain text here (the chat's HTML
stripped): the page sets them as text, never as markup.

What may be done is read from the same functions the keyboards are drawn from
(``table_answer`` for the table's Cheat! / I believe you, ``private_answers``, ``play_limit``
and ``can_pass`` for the hand's), so under every rule the Mini App offers exactly what the
keyboards offer: the table's buttons and the player's own hand keyboard together.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from tgcheat.bot.texts import claim_phrase, rank_symbol
from tgcheat.bot.views import (
    final_table_view,
    pull_view,
    pulling_line,
    quick_waiting_text,
    refusal_text,
    reveal_view,
    table_view,
)
from tgcheat.bot.views.hand import _turn_prompt
from tgcheat.bot.views.profile import profile_lines
from tgcheat.engine.cards import Card
from tgcheat.engine.events import ChallengeResolved, TriggerPulled
from tgcheat.engine.game import can_pass, claimable_ranks, play_limit
from tgcheat.engine.rules import Passing
from tgcheat.engine.state import Claim, GameState, Phase
from tgcheat.i18n import Translator
from tgcheat.store.changes import Reveal
from tgcheat.table.audiences import private_answers, table_answer
from tgcheat.table.refusals import SessionRefusal
from tgcheat.table.session import Session
from tgcheat.table.standing import Profile

_TAG = re.compile(r"<[^>]*>")

Json = dict[str, Any]


def plain(text: str) -> str:
    """A chat text without its HTML: what the page sets as text."""
    return html.unescape(_TAG.sub("", text))


def outsider_json(tr: Translator) -> Json:
    """What a person not seated in a place's game is told of it: only that, whether the place
    has a game or not."""
    return {"v": 0, "rtl": tr.rtl, "refused": refusal_text(tr, SessionRefusal.NOT_PLAYING_THERE)}


def takes_part(session: Session | None, user_id: int) -> bool:
    """Whether ``user_id`` is in the place's lobby or seated in its game: a stream watches the
    place only for them."""
    if session is None:
        return False
    if session.lobby is not None and session.lobby.has(user_id):
        return True
    return session.game is not None and session.game.seat_of(user_id) is not None


def no_game_json(tr: Translator, waiting: int | None = None) -> Json:
    """What the Mini App opened without a game named (the menu button) shows a person who
    plays in no game now: its home, with the way to a quick game (``waiting``: the people
    waiting for one, the person among them; None: they do not wait)."""
    home: Json = {
        "v": 0,
        "rtl": tr.rtl,
        "refused": tr._(
            "You are in no game right now. Your cards open here once a game you play in has begun."
        ),
    }
    if waiting is None:
        home["quick"] = {"join": tr._("⚡ Quick game")}
    else:
        home["quick"] = {
            "waiting": plain(quick_waiting_text(tr, waiting, in_chat=False)),
            "leave": tr._("🚪 Stop waiting"),
        }
    return home


def profile_json(tr: Translator, profile: Profile | None, name: str) -> Json:
    """The profile page: /profile's lines as plain text, and the share button's label."""
    lines = [plain(line) for line in profile_lines(tr, profile)]
    shown_name = html.escape(profile.name if profile is not None else name)
    title = plain(tr._("👤 {name}").format(name=shown_name))
    return {
        "v": 0,
        "rtl": tr.rtl,
        "title": title,
        "lines": lines,
        "share": tr._("📣 Share") if profile is not None else "",
    }


def card_json(tr: Translator, card: Card) -> Json:
    suit = card.suit
    return {
        "id": int(card),
        "rank": card.rank.code,
        "label": rank_symbol(tr, card.rank),
        # A joker has no suit; the page draws it apart.
        "suit": "cdhs"[suit] if suit is not None else "",
    }


def state_json(
    tr: Translator,
    session: Session | None,
    version: int,
    user_id: int,
    bot_username: str,
    now_ms: int,
    *,
    member: bool = False,
) -> Json:
    """The game at ``session`` as ``user_id`` sees it: the table for all, the hand only its
    owner's. ``member``: the person is a member of the place's group, and watches a game they
    do not play in (the table, never a hand nor a card not turned over). Anyone else not
    seated in the game is told so (the refusal's own words)."""
    game = session.game if session is not None else None
    seat = game.seat_of(user_id) if game is not None else None
    lobby = session.lobby if session is not None and game is None else None
    if session is not None and lobby is not None and (member or lobby.has(user_id)):
        return lobby_json(tr, session, version, user_id)
    if session is None or game is None or (seat is None and not member):
        # Nothing of the place, not even its version (which would tell when it changes).
        return outsider_json(tr)
    result: Json = table_json(tr, session, game, version, now_ms)
    if game.phase is Phase.FINISHED and game.result is not None:
        result["table"] = plain(final_table_view(tr, session, game, game.result).text).split("\n")
    else:
        result["table"] = plain(table_view(tr, session, game, bot_username, now_ms).text).split(
            "\n"
        )
    pull = last_pull_json(tr, session, game)
    if pull is not None:
        result["pull"] = pull
    if game.pull_by is not None:
        # The pause before the pull: the page holds its breath with the group.
        result["pulling"] = plain(pulling_line(tr, game, game.pull_by))
    if seat is None or game.players[seat].left:
        # Watching: a group member who does not play, or a player who is out.
        result["watching"] = tr._("👀 watching")
        return result
    hand = sorted(game.players[seat].hand, key=lambda card: (card.rank, card))
    result |= {
        "me": seat,
        "hand": [card_json(tr, card) for card in hand],
        "handTitle": plain(tr._("🃏 Your cards ({count}):").format(count=len(hand))),
    }
    if game.phase is Phase.FINISHED:
        return result
    result |= offers(tr, session, game, seat)
    return result


def last_pull_json(tr: Translator, session: Session, game: GameState) -> Json | None:
    """The game's last pull of the revolver's trigger (``penalty=revolver``), as the chat's
    line says it ("💥 BANG!" or "click"), with its number in the game's log: the page shows
    it once, when a new one comes."""
    told = session.told
    if told.game_id != session.game_id:
        return None
    for seq, event in reversed(told.lines):
        if isinstance(event, TriggerPulled):
            return {
                "seq": seq,
                "text": plain(pull_view(tr, game, event)),
                "hit": event.hit,
                "seat": event.seat,
            }
    return None


def table_json(
    tr: Translator, session: Session, game: GameState, version: int, now_ms: int
) -> Json:
    """What everyone at the table sees: seats in play order with their card counts, whose
    turn it is and until when, the pile's size and the last claim on it (never its cards)."""
    last = game.last_claim
    claim = None
    if last is not None and game.phase is not Phase.FINISHED:
        claim = {
            "seat": last.seat,
            "name": game.players[last.seat].name,
            "count": len(last.cards),
            "text": claim_phrase(tr, len(last.cards), last.rank),
        }
    result = game.result
    return {
        "v": version,
        "rtl": tr.rtl,
        "game": session.game_id,
        "place": session.place.key,
        "title": tr._("⚡ A quick game") if session.quick else session.place_title,
        "plays": game.plays,
        "phase": str(game.phase),
        "pile": len(game.pile),
        "turn": game.turn,
        "seats": [{"name": p.name, "cards": len(p.hand), "left": p.left} for p in game.players],
        "deadline": session.deadline_ms,
        # When the turn began (the session's last change): the timer runs down from it.
        "since": session.changed_ms,
        "now": now_ms,
        "required": game.required.code if game.required is not None else None,
        "claim": claim,
        "winner": result.winner if result is not None else None,
    }


def lobby_json(tr: Translator, session: Session, version: int, user_id: int) -> Json:
    """An open lobby: who is in, and whether the asker may join from the page."""
    lobby = session.lobby
    assert lobby is not None
    return {
        "v": version,
        "rtl": tr.rtl,
        "place": session.place.key,
        "title": session.place_title,
        "lobby": [name for _, name in lobby.players],
        "joined": lobby.has(user_id),
        "join": tr._("➕ Join"),
        "table": [plain(tr._("🃏 <b>Cheat</b>: a new game is open"))],
    }


def offers(tr: Translator, session: Session, game: GameState, seat: int) -> Json:
    """What the player may do now: the table's answers and their hand's keyboard."""
    answers: list[Json] = []
    seen: set[tuple[str, int]] = set()

    def answer(op: str, claim: Claim, label: str) -> None:
        if (op, claim.number) not in seen:
            seen.add((op, claim.number))
            answers.append({"op": op, "claim": claim.number, "label": label})

    cheat, believe = tr._("❗ Cheat!"), tr._("✅ I believe you")
    on_table = table_answer(game)
    if on_table is not None:
        if on_table.believe:
            answer("believe", on_table.claim, believe)
        answer("cheat", on_table.claim, cheat)
    private = private_answers(game, seat)
    if private.final is not None:
        answer("believe", private.final, believe)
        answer("cheat", private.final, cheat)
    for claim in private.challengeable:
        answer("cheat", claim, cheat)
    if private.vote_for is not None:
        answers.append({"op": "yes", "label": tr._("👍 Yes")})
        answers.append({"op": "no", "label": tr._("👎 No")})
    found: Json = {"answers": answers}
    limit = play_limit(game, seat)
    if limit > 0:
        rank = game.required
        ranks = list(claimable_ranks(game))
        found["play"] = {
            "limit": limit,
            "prompt": plain(_turn_prompt(tr, game, limit)),
            "tap": tr._("Tap the cards you play."),
            "clear": tr._("✖️ Clear"),
            # The Play button's label for each number of cards picked, and each rank claimed.
            "claims": {
                r.code: [
                    tr._("▶️ Play: {claim}").format(claim=claim_phrase(tr, n, r))
                    for n in range(1, limit + 1)
                ]
                for r in ranks
            },
            "claimHint": (
                tr._("Now tap the rank you claim.") if rank is None else tr._("Tap ▶️ Play.")
            ),
            "rankLabels": {r.code: f"= {rank_symbol(tr, r)}" for r in ranks},
        }
    if can_pass(game, seat):
        vote = game.rules.passing is Passing.VOTE
        found["pass"] = tr._("🙋 Ask to pass") if vote else tr._("⏭ Pass")
    return found


def reveals_json(tr: Translator, game: GameState, reveals: Iterable[Reveal]) -> list[Json]:
    """Each reveal as the group reads it (the chat's reveal message, as text), with the cards
    it turned over (only those: everyone at the table saw them), whether they lied, and who
    takes the pile."""
    found = []
    for reveal in reveals:
        cards = tuple(Card(c) for c in reveal.cards)
        claim = Claim(0, reveal.claimant, cards, reveal.rank)
        event = ChallengeResolved(
            reveal.challenger, claim, cards, reveal.lie, reveal.taker, reveal.taken
        )
        found.append(
            {
                "text": plain(reveal_view(tr, game, event).text),
                "cards": [card_json(tr, card) for card in cards],
                "claimed": reveal.rank.code,
                "lie": reveal.lie,
                "taker": reveal.taker,
            }
        )
    return found
