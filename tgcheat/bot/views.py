"""Views: sessions and events turned into message texts and keyboards, in one reader's language.

Pure functions of their arguments. Every text a person reads comes from the catalog; every
user name is HTML-escaped here, before it enters a message.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from tgcheat.bot.callbacks import Op, Press
from tgcheat.bot.texts import claim_phrase, rank_plural, rank_symbol
from tgcheat.engine.cards import Card, Rank, count_by_rank
from tgcheat.engine.events import ChallengeResolved
from tgcheat.engine.game import Refusal, can_accept, final_answerers, play_limit
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.state import Claim, EndReason, GameState, Phase, Result
from tgcheat.i18n import N_, Translator
from tgcheat.store.session import Session

#: Telegram allows 4096 characters; names are cut so that a table of ten never exceeds it.
MAX_NAME_CHARS = 64
KEYBOARD_ROW = 4


@dataclass(frozen=True, slots=True)
class View:
    text: str
    markup: InlineKeyboardMarkup | None = None


def name_html(name: str) -> str:
    """A user's name, safe in an HTML message (long names are shortened)."""
    clean = " ".join(name.split()) or "?"
    if len(clean) > MAX_NAME_CHARS:
        clean = clean[: MAX_NAME_CHARS - 1] + "…"
    return f"<b>{html.escape(clean)}</b>"


def deep_link(bot_username: str, payload: str) -> str:
    return f"https://t.me/{bot_username}?start={payload}"


def join_payload(chat_id: int) -> str:
    return f"j{chat_id}"


def hand_payload(chat_id: int) -> str:
    return f"h{chat_id}"


def _count_cards(tr: Translator, count: int) -> str:
    return tr.ngettext("{count} card", "{count} cards", count).format(count=count)


# --- the lobby -------------------------------------------------------------------------------


def lobby_view(tr: Translator, session: Session, lobby: Lobby, bot_username: str) -> View:
    rules = lobby.rules
    names = ", ".join(name_html(name) for _, name in lobby.players) or tr._("nobody yet")
    lines = [
        tr._("🃏 <b>Cheat</b>: a new game is open"),
        tr._("Players ({count}/{most}): {names}").format(
            count=len(lobby.players), most=rules.max_players, names=names
        ),
        "",
        tr._(
            "Tap <b>Join</b> to get your cards in a private chat with me. "
            "Whoever opened the game (or an admin) taps <b>Start</b> when "
            "{least}–{most} players are in."
        ).format(least=rules.min_players, most=rules.max_players),
    ]
    press = Press(Op.START, session.chat_id, session.game_id, 0)
    cancel = Press(Op.CANCEL, session.chat_id, session.game_id, 0)
    markup = InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    tr._("➕ Join"), url=deep_link(bot_username, join_payload(session.chat_id))
                )
            ],
            [
                InlineKeyboardButton(tr._("▶️ Start"), callback_data=press.encode()),
                InlineKeyboardButton(tr._("✖️ Cancel"), callback_data=cancel.encode()),
            ],
        ]
    )
    return View("\n".join(lines), markup)


def lobby_closed_view(tr: Translator) -> View:
    return View(tr._("🃏 This game was cancelled. Send /new to open another."))


# --- the table (group) -------------------------------------------------------------------------


def claim_line(tr: Translator, state: GameState, claim: Claim) -> str:
    return tr._("{name}: {claim}").format(
        name=name_html(state.players[claim.seat].name),
        claim=claim_phrase(tr, len(claim.cards), claim.rank),
    )


def table_view(tr: Translator, session: Session, state: GameState, bot_username: str) -> View:
    lines = [tr._("🃏 <b>Cheat</b> · pile: {pile}").format(pile=_count_cards(tr, len(state.pile)))]
    for seat, player in enumerate(state.players):
        marker = "▶️ " if state.phase is Phase.PLAYING and seat == state.turn else ""
        status = tr._("left the game") if player.left else _count_cards(tr, len(player.hand))
        lines.append(f"{seat + 1}. {marker}{name_html(player.name)} · {status}")
    lines.append("")
    last = state.last_claim
    if state.phase is Phase.FINAL_CHECK and last is not None:
        lines.append(tr._("⏳ Last cards! {claim}").format(claim=claim_line(tr, state, last)))
        waiting = sorted(final_answerers(state) - state.accepted)
        lines.append(
            tr._("Waiting for {names} to believe it or call Cheat!").format(
                names=", ".join(name_html(state.players[s].name) for s in waiting)
            )
        )
    elif state.phase is Phase.PLAYING:
        if last is not None:
            lines.append(tr._("Last play: {claim}").format(claim=claim_line(tr, state, last)))
        lines.append(_turn_line(tr, state))
    else:
        lines.append(tr._("🏁 The game is over."))
    return View("\n".join(lines), _table_keyboard(tr, session, state, bot_username))


def _turn_line(tr: Translator, state: GameState) -> str:
    name = name_html(state.players[state.turn].name)
    if state.required is None:
        return tr._("{name} to play, any rank").format(name=name)
    return tr._("{name} to play {rank}").format(
        name=name, rank=f"<b>{html.escape(rank_plural(tr, state.required))}</b>"
    )


def _table_keyboard(
    tr: Translator, session: Session, state: GameState, bot_username: str
) -> InlineKeyboardMarkup | None:
    if state.phase is Phase.FINISHED:
        return None
    rows: list[list[InlineKeyboardButton]] = []
    last = state.last_claim
    if last is not None:
        challenge = Press(Op.CHALLENGE, session.chat_id, session.game_id, last.number)
        cheat = InlineKeyboardButton(tr._("❗ Cheat!"), callback_data=challenge.encode())
        if state.phase is Phase.FINAL_CHECK:
            accept = Press(Op.ACCEPT, session.chat_id, session.game_id, last.number)
            rows.append(
                [
                    InlineKeyboardButton(tr._("✅ I believe you"), callback_data=accept.encode()),
                    cheat,
                ]
            )
        else:
            rows.append([cheat])
    rows.append(
        [
            InlineKeyboardButton(
                tr._("🂠 My cards"), url=deep_link(bot_username, hand_payload(session.chat_id))
            )
        ]
    )
    return InlineKeyboardMarkup(rows)


def reveal_view(tr: Translator, state: GameState, event: ChallengeResolved) -> View:
    claimant = name_html(state.players[event.claim.seat].name)
    lines = [
        tr._("❗ {challenger} calls Cheat on {claimant} ({claim}): {cards}").format(
            challenger=name_html(state.players[event.challenger].name),
            claimant=claimant,
            claim=claim_phrase(tr, len(event.claim.cards), event.claim.rank),
            cards=" ".join(card.label for card in event.revealed),
        ),
        (tr._("Caught bluffing!") if event.lie else tr._("It was true!"))
        + " "
        + tr.ngettext(
            "{name} takes the pile: {count} card.",
            "{name} takes the pile: {count} cards.",
            event.taken,
        ).format(name=name_html(state.players[event.taker].name), count=event.taken),
    ]
    return View("\n".join(lines))


def result_view(tr: Translator, state: GameState, result: Result) -> View:
    players = state.players
    headline = {
        EndReason.WENT_OUT: N_("🏆 {name} played out their hand and wins!"),
        EndReason.LAST_PLAYER: N_("🏆 Everyone else left: {name} wins!"),
        EndReason.MOVE_CAP: N_("🏆 {plays} plays reached: {name} holds the fewest cards and wins!"),
        EndReason.STOPPED: N_("🛑 The game was stopped."),
    }[result.reason]
    lines: list[str] = []
    if result.winner is not None:
        lines.append(
            tr._(headline).format(name=name_html(players[result.winner].name), plays=state.plays)
        )
    elif result.reason is EndReason.MOVE_CAP:
        lines.append(
            tr._("🤝 {plays} plays reached: a draw between {names}.").format(
                plays=state.plays,
                names=", ".join(
                    name_html(players[s].name) for s, place in result.places if place == 1
                ),
            )
        )
    else:
        lines.append(tr._(headline))
    for seat, place in result.places:
        if seat == result.winner:
            continue
        lines.append(
            tr._("{place}. {name} · {cards}").format(
                place=place,
                name=name_html(players[seat].name),
                cards=_count_cards(tr, len(players[seat].hand)),
            )
        )
    lines.append("")
    lines.append(tr._("Send /new for another game."))
    return View("\n".join(lines))


# --- a player's hand (private) -----------------------------------------------------------------


def hand_text(tr: Translator, hand: tuple[Card, ...]) -> str:
    groups = count_by_rank(hand)
    return " · ".join(
        rank_symbol(tr, rank) + (f"×{count}" if count > 1 else "") for rank, count in groups.items()
    )


def hand_view(
    tr: Translator,
    session: Session,
    state: GameState,
    seat: int,
    title: str,
    selection: str = "",
) -> View:
    """The player's one private message: their cards; on their turn, the keyboard to play."""
    player = state.players[seat]
    lines = [
        tr._("🃏 Your cards in {group} ({count}):").format(
            group=f"<b>{html.escape(title)}</b>", count=len(player.hand)
        ),
        hand_text(tr, player.hand) if player.hand else tr._("none"),
    ]
    limit = play_limit(state, seat)
    if state.phase is Phase.FINISHED:
        lines += ["", tr._("The game is over.")]
        return View("\n".join(lines))
    if player.left:
        lines += ["", tr._("You have left this game.")]
        return View("\n".join(lines))
    if limit == 0:
        if can_accept(state, seat):
            lines += ["", tr._("Last cards were played: answer in the group.")]
        return View("\n".join(lines))
    rank = state.required
    selected = Counter(Rank.from_code(code) for code in selection)
    lines.append("")
    if rank is not None:
        lines.append(
            tr.ngettext(
                "🔔 Your turn: play up to {most} card as {rank}.",
                "🔔 Your turn: play up to {most} cards as {rank}.",
                limit,
            ).format(most=limit, rank=f"<b>{html.escape(rank_plural(tr, rank))}</b>")
        )
    if selection:
        picked = " ".join(rank_symbol(tr, r) for r in sorted(selected.elements()))
        lines.append(tr._("Selected: {cards}").format(cards=picked))
    else:
        lines.append(tr._("Tap a rank to pick a card of it; tap again for one more."))
    return View("\n".join(lines), _hand_keyboard(tr, session, state, seat, selected))


def _hand_keyboard(
    tr: Translator,
    session: Session,
    state: GameState,
    seat: int,
    selected: Counter[Rank],
) -> InlineKeyboardMarkup:
    held = count_by_rank(state.players[seat].hand)
    selection = "".join(r.code for r in sorted(selected.elements()))
    buttons = []
    for rank, count in held.items():
        chosen = selected[rank]
        label = rank_symbol(tr, rank) + (f" ×{count}" if count > 1 else "")
        if chosen:
            label = f"✅ {rank_symbol(tr, rank)} {chosen}/{count}"
        press = Press(Op.PICK, session.chat_id, session.game_id, state.plays, selection, rank)
        buttons.append(InlineKeyboardButton(label, callback_data=press.encode()))
    rows = [buttons[i : i + KEYBOARD_ROW] for i in range(0, len(buttons), KEYBOARD_ROW)]
    total = sum(selected.values())
    if total and state.required is not None:
        clear = Press(Op.CLEAR, session.chat_id, session.game_id, state.plays, "", None)
        play = Press(
            Op.PLAY, session.chat_id, session.game_id, state.plays, selection, state.required
        )
        rows.append(
            [
                InlineKeyboardButton(tr._("✖️ Clear"), callback_data=clear.encode()),
                InlineKeyboardButton(
                    tr._("▶️ Play {claim}").format(claim=claim_phrase(tr, total, state.required)),
                    callback_data=play.encode(),
                ),
            ]
        )
    return InlineKeyboardMarkup(rows)


# --- short answers (pop-ups) and replies ---------------------------------------------------------

REFUSALS: dict[Refusal, str] = {
    Refusal.GAME_OVER: N_("This game is over."),
    Refusal.NOT_IN_GAME: N_("You are not playing in this game."),
    Refusal.NOT_YOUR_TURN: N_("It is not your turn."),
    Refusal.WAITING_FOR_FINAL: N_("Wait: the last cards played must be answered first."),
    Refusal.BAD_CARD_COUNT: N_("Pick between one card and the most you may play."),
    Refusal.CARDS_NOT_IN_HAND: N_("You do not hold those cards any more."),
    Refusal.WRONG_RANK: N_("You must claim the required rank."),
    Refusal.NO_SUCH_CLAIM: N_("Too late: that play can no longer be challenged."),
    Refusal.OWN_CLAIM: N_("You cannot call Cheat on your own play."),
    Refusal.NOT_NEXT_PLAYER: N_("Only the next player may answer this play."),
    Refusal.NOT_FINAL: N_("Only last cards need to be believed."),
    Refusal.ALREADY_ACCEPTED: N_("You already believed it."),
    Refusal.STALE_TIMEOUT: N_("This button is out of date."),
    Refusal.TOO_FEW_PLAYERS: N_("Not enough players yet."),
    Refusal.ALREADY_JOINED: N_("You are already in this game."),
    Refusal.LOBBY_FULL: N_("This game is full."),
}


def refusal_text(tr: Translator, reason: Refusal) -> str:
    return tr._(REFUSALS[reason])
