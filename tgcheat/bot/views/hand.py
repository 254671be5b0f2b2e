"""A player's one private message: their cards, and on their turn the keyboard to play."""

from __future__ import annotations

import gettext
import html
from collections import Counter
from collections.abc import Mapping

from tgcheat.bot.callbacks import (
    ClaimPress,
    HandPress,
    Op,
    TurnPress,
    decode_selection,
    encode_selection,
)
from tgcheat.bot.texts import claim_phrase, rank_plural, rank_symbol
from tgcheat.bot.views.base import (
    Button,
    View,
    button,
    claim_line,
    in_rows,
    keyboard,
    ltr,
    moment,
    name_html,
    page,
    title_html,
)
from tgcheat.bot.views.profile import SHARE_RESULT, private_news_lines, share_button
from tgcheat.engine.cards import Rank, count_by_rank
from tgcheat.engine.game import (
    awaited,
    can_pass,
    claimable_ranks,
    must_call,
    play_limit,
)
from tgcheat.engine.rules import (
    CHAMBERS,
    Passing,
)
from tgcheat.engine.state import EndReason, GameState, Phase
from tgcheat.i18n import Translator
from tgcheat.table.audiences import PrivateAnswers, private_answers
from tgcheat.table.chronicle import Notice, NoticeKind
from tgcheat.table.session import Session
from tgcheat.table.standing import PersonNews


def hand_text(tr: Translator, held: Mapping[Rank, int]) -> str:
    """A hand as cards, grouped by rank (``count_by_rank``): "7 7 · K". Each card is its rank's
    symbol: suits never matter in the game, and a row of cards reads at a glance on a phone
    where "7×2" reads as arithmetic."""
    return " · ".join(ltr(tr, cards_of_rank(tr, rank, count)) for rank, count in held.items())


def cards_of_rank(tr: Translator, rank: Rank, count: int) -> str:
    """``count`` cards of ``rank`` as the hand shows them: "7 7"."""
    # Keyed as ``rank_symbol`` is, by the catalog: the symbols are all the text depends on.
    key = (tr.catalog, rank, count)
    cards = _CARDS_OF_RANK.get(key)
    if cards is None:
        if len(_CARDS_OF_RANK) >= 10_000:
            _CARDS_OF_RANK.clear()
        cards = _CARDS_OF_RANK[key] = " ".join([rank_symbol(tr, rank)] * count)
    return cards


#: The cards of a rank as shown, by catalog, rank and count: every hand and pick button of
#: every play shows them.
_CARDS_OF_RANK: dict[tuple[gettext.NullTranslations, Rank, int], str] = {}


def hand_view(
    tr: Translator,
    session: Session,
    state: GameState,
    seat: int,
    title: str,
    selection: str = "",
    app_url: str | None = None,
    news: PersonNews | None = None,
) -> View:
    """The player's one private message: their cards; on their turn, the keyboard to play.
    ``selection``: the cards picked so far, as a button carries them (``encode_selection``, or
    one rank code per card). More cards than a button can carry raise ``SelectionTooLong``.
    ``app_url``: the Mini App's address; a game in play then offers "🃏 Open cards" (a
    ``web_app`` button: Telegram opens the page with the player's signed identity)."""
    player = state.players[seat]
    held = count_by_rank(player.hand)
    if session.private_table:
        # A game against the computer, or a quick game: its table is in this very chat.
        header = tr._("🃏 Your cards ({count}):").format(count=len(player.hand))
    else:
        header = tr._("🃏 Your cards in {group} ({count}):").format(
            group=title_html(title), count=len(player.hand)
        )
    lines = [
        header,
        hand_text(tr, held) if player.hand else tr.pgettext("hand", "none"),
    ]
    notice = session.notice
    if notice is not None and notice.seat == seat:
        lines[:0] = [_private_notice(tr, state, seat, notice), ""]
    if state.phase is Phase.FINISHED:
        lines += ["", *_own_result(tr, session, state, seat), *private_news_lines(tr, news)]
        result = state.result
        if result is None or result.reason is EndReason.STOPPED:
            return page(tr, "\n".join(lines))
        # A counted game's result may be shared into a chat the player picks (inline mode).
        return page(tr, "\n".join(lines), keyboard([[share_button(tr, SHARE_RESULT)]]))
    if player.shot:
        lines += ["", tr._("💥 You were shot and are out. You may watch the rest of the game.")]
        return page(tr, "\n".join(lines))
    if player.left:
        if notice is None or notice.seat != seat:
            lines += ["", tr._("You have left this game.")]
        return page(tr, "\n".join(lines))
    if state.rules.revolver:
        lines += ["", _revolver_line(tr, state, seat)]
    selected = decode_selection(selection)
    answers = private_answers(state, seat)
    rows = _answer_rows(tr, session, state, answers, lines)
    limit = play_limit(state, seat)
    if session.reminded and seat in awaited(state) and session.waiting_since_ms:
        since = moment(tr, session.waiting_since_ms)
        lines += [
            "",
            tr._("⏰ The game has been waiting for you since {moment}.").format(moment=since),
        ]
    if limit > 0:
        lines.append("")
        lines.append(_turn_prompt(tr, state, limit))
        if selection:
            picked = " ".join(ltr(tr, rank_symbol(tr, r)) for r in sorted(selected.elements()))
            lines.append(tr._("Selected: {cards}").format(cards=picked))
        else:
            lines.append(tr._("Tap the cards you play."))
        rows += _play_rows(tr, session, state, seat, held, selected, lines)
    elif must_call(state) and seat == state.turn:
        lines += ["", tr._("Nobody else has cards left: call the last play.")]
    if app_url is not None:
        rows.append([open_cards_button(tr, app_url, session)])
    return page(tr, "\n".join(lines), keyboard(rows) if rows else None)


def check_selection_fits(session: Session, state: GameState, selected: Counter[Rank]) -> None:
    """Raises ``SelectionTooLong`` when the buttons of a hand with ``selected`` picked would
    not carry it: every button of the turn's keyboard spells the selection the same way and
    adds at most one rank code, so one of them decides for all."""
    selection = encode_selection(selected)
    HandPress(
        Op.PICK, session.chat_id, session.game_id, state.plays, selection, Rank.ACE, session.topic
    ).encode()


def _revolver_line(tr: Translator, state: GameState, seat: int) -> str:
    """``penalty=revolver``: the player's own revolver, and a round sat out without cards."""
    player = state.players[seat]
    line = tr._("🔫 Your revolver: {pulls} of {chambers} chambers pulled.").format(
        pulls=player.pulls, chambers=CHAMBERS
    )
    if state.pull_by == seat:
        line += "\n" + tr._("You must pull the trigger now…")
    elif not player.hand:
        line += "\n" + tr._("You have no cards left: you sit out the rest of this round.")
    return line


def open_cards_button(tr: Translator, app_url: str, session: Session) -> Button:
    """The Mini App on this game: the place rides in the page's address (a ``startapp``
    parameter's spelling, "_" for ":", so that one reader serves both ways in)."""
    place = session.place.key.replace(":", "_")
    return {"text": tr._("🃏 Open cards"), "web_app": {"url": f"{app_url}?p={place}"}}


def _private_notice(tr: Translator, state: GameState, seat: int, notice: Notice) -> str:
    """What happened to this player without their press, told to them alone."""
    match notice.kind:
        case NoticeKind.TIMED_OUT:
            text = tr.ngettext(
                "⏰ Your time ran out: {count} card was played for you.",
                "⏰ Your time ran out: {count} cards were played for you.",
                notice.cards,
            ).format(count=notice.cards)
            limit = state.rules.afk_limit
            missed = state.players[seat].timeouts
            if limit > missed:
                text += " " + tr.ngettext(
                    "Miss {count} more turn in a row and you are out of the game.",
                    "Miss {count} more turns in a row and you are out of the game.",
                    limit - missed,
                ).format(count=limit - missed)
            return text
        case NoticeKind.BELIEVED_BY_CLOCK:
            return tr._("⏰ Time was up: the last cards were believed.")
        case NoticeKind.REMOVED_FOR_TIMEOUTS:
            return tr._("⏰ You missed too many turns in a row and are out of this game.")
        case NoticeKind.KICKED:
            return tr._("🚪 You were removed from this game.")
        case NoticeKind.LEFT:
            return tr._("🚪 You left this game.")


def _own_result(tr: Translator, session: Session, state: GameState, seat: int) -> list[str]:
    """The player's own end of the game: their place, and their own bluffs (which only they
    know) and calls."""
    result = state.result
    place = dict(result.places).get(seat) if result is not None else None
    if result is not None and result.winner == seat:
        lines = [tr._("🏆 You won!")]
    elif place is not None and result is not None and result.reason is not EndReason.STOPPED:
        lines = [
            tr._("🏁 The game is over. Your place: {place} of {count}.").format(
                place=place, count=len(result.places)
            )
        ]
    else:
        lines = [tr._("🏁 The game is over.")]
    mine = session.tally.of(seat)
    lines.append(
        tr.ngettext(
            "Your bluffs: {count}, caught {caught}.",
            "Your bluffs: {count}, caught {caught}.",
            mine.bluffs,
        ).format(count=mine.bluffs, caught=mine.bluffs_caught)
        + " "
        + tr._("Your Cheat! calls: {right} right, {wrong} wrong.").format(
            right=mine.right_calls, wrong=mine.wrong_calls
        )
    )
    return lines


def _turn_prompt(tr: Translator, state: GameState, limit: int) -> str:
    rank = state.required
    if limit == 1:
        # "Play up to 1 card" reads oddly; one card is often the last one in the hand.
        if rank is not None:
            return tr._("🔔 Your turn: play one card and claim {claim}.").format(
                claim=f"<b>{html.escape(claim_phrase(tr, 1, rank))}</b>"
            )
        return tr._("🔔 Your turn: play one card and name any rank.")
    if rank is not None:
        return tr.ngettext(
            "🔔 Your turn: play up to {most} card as {rank}.",
            "🔔 Your turn: play up to {most} cards as {rank}.",
            limit,
        ).format(most=limit, rank=f"<b>{html.escape(rank_plural(tr, rank))}</b>")
    return tr.ngettext(
        "🔔 Your turn: play up to {most} card and name any rank.",
        "🔔 Your turn: play up to {most} cards and name any rank.",
        limit,
    ).format(most=limit)


def _answer_rows(
    tr: Translator, session: Session, state: GameState, answers: PrivateAnswers, lines: list[str]
) -> list[list[Button]]:
    """What the player answers in private (``private_answers``): last cards, the last play
    when only they may call Cheat!, or a vote on someone's request to pass."""
    rows: list[list[Button]] = []
    chat_id, game_id, topic = session.chat_id, session.game_id, session.topic
    final = answers.final
    if final is not None:
        lines += ["", tr._("⏳ Last cards! {claim}").format(claim=claim_line(tr, state, final))]
        accept = ClaimPress(Op.ACCEPT, chat_id, game_id, final.number, topic)
        cheat = ClaimPress(Op.CHALLENGE, chat_id, game_id, final.number, topic)
        rows.append(
            [
                button(tr._("✅ I believe you"), callback_data=accept.encode()),
                button(tr._("❗ Cheat!"), callback_data=cheat.encode()),
            ]
        )
    for claim in answers.challengeable:
        lines += [
            "",
            tr._("Last play: {claim}. Believe it and play, or call Cheat!").format(
                claim=claim_line(tr, state, claim)
            ),
        ]
        challenge = ClaimPress(Op.CHALLENGE, chat_id, game_id, claim.number, topic)
        rows.append([button(tr._("❗ Cheat!"), callback_data=challenge.encode())])
    if answers.vote_for is not None:
        lines += [
            "",
            tr._("🙋 {name} asks to pass. Do you agree?").format(
                name=name_html(state.players[answers.vote_for].name)
            ),
        ]
        yes = TurnPress(Op.VOTE_YES, chat_id, game_id, state.plays, topic)
        no = TurnPress(Op.VOTE_NO, chat_id, game_id, state.plays, topic)
        rows.append(
            [
                button(tr._("👍 Yes"), callback_data=yes.encode()),
                button(tr._("👎 No"), callback_data=no.encode()),
            ]
        )
    return rows


#: Pick buttons per row: four fit a phone held in one hand while each label is a few cards…
PICK_ROW = 4
#: … and rows hold fewer buttons once a label may grow longer than this many characters
#: ("✅ 10 10 10", "• 10 10 10 •"), so that Telegram does not cut it short.
PICK_LABEL_FITS_FOUR = 9
PICK_LABEL_FITS_THREE = 13
#: Claim buttons per row: A–5, 6–10, then the court cards on a row of their own.
CLAIM_ROW = 5


def _play_rows(
    tr: Translator,
    session: Session,
    state: GameState,
    seat: int,
    held: Mapping[Rank, int],
    selected: Counter[Rank],
    lines: list[str],
) -> list[list[Button]]:
    """The keyboard of a turn: a button per rank held (tap to pick one more card of it), then
    either ▶️ Play with the claim, alone on its row, or, when no rank is required, a grid of the
    ranks to claim ("= Q"); then ✖️ Clear and a way to pass. ``lines`` gets what to tap next."""
    selection = encode_selection(selected)
    picks = HandPress(
        Op.PICK, session.chat_id, session.game_id, state.plays, selection, topic=session.topic
    )
    labels = [
        _pick_label(tr, rank, count, selected[rank], state.required) for rank, count in held.items()
    ]
    buttons = [
        button(label, callback_data=data)
        for label, data in zip(labels, picks.encode_each(held), strict=True)
    ]
    rows = in_rows(buttons, width=_pick_row_width(tr, held, state.required))
    total = sum(selected.values())
    more = total < play_limit(state, seat)
    clear = HandPress(Op.CLEAR, session.chat_id, session.game_id, state.plays, topic=session.topic)
    clear_row = [button(tr._("✖️ Clear"), callback_data=clear.encode())]
    if total and state.required is not None:
        lines.append(tr._("Tap ▶️ Play, or more cards.") if more else tr._("Tap ▶️ Play."))
        play = HandPress(
            Op.PLAY,
            session.chat_id,
            session.game_id,
            state.plays,
            selection,
            state.required,
            session.topic,
        )
        label = tr._("▶️ Play: {claim}").format(claim=claim_phrase(tr, total, state.required))
        # The Play button has a row of its own: the widest target, and never mistaken for Clear.
        rows.append([button(label, callback_data=play.encode())])
        rows.append(clear_row)
    elif total:
        # No rank is required: the player names one (any rank, even one they do not hold).
        lines.append(
            tr._("Now tap the rank you claim, or more cards.")
            if more
            else tr._("Now tap the rank you claim.")
        )
        play = HandPress(
            Op.PLAY, session.chat_id, session.game_id, state.plays, selection, topic=session.topic
        )
        ranks = claimable_ranks(state)
        claims = [
            button(_claim_label(tr, rank), callback_data=data)
            for rank, data in zip(ranks, play.encode_each(ranks), strict=True)
        ]
        rows += in_rows(claims, width=CLAIM_ROW)
        rows.append(clear_row)
    honest = _honest_play(tr, session, state, seat, held) if not total else None
    if honest is not None:
        rows.append([honest])
    if can_pass(state, seat):
        label = tr._("🙋 Ask to pass") if state.rules.passing is Passing.VOTE else tr._("⏭ Pass")
        press = TurnPress(Op.PASS, session.chat_id, session.game_id, state.plays, session.topic)
        rows.append([button(label, callback_data=press.encode())])
    return rows


def _honest_play(
    tr: Translator, session: Session, state: GameState, seat: int, held: Mapping[Rank, int]
) -> Button | None:
    """One tap for the commonest play: every card of the required rank held (as many as may be
    played), claimed as what they are. It spares a pick per card, each an edit of this
    message; any other play is picked card by card."""
    rank = state.required
    count = min(held.get(rank, 0), play_limit(state, seat)) if rank is not None else 0
    if rank is None or count == 0:
        return None
    selection = encode_selection({rank: count})
    play = HandPress(Op.PLAY, session.chat_id, session.game_id, state.plays, selection, rank)
    label = tr._("▶️ Play your {cards}").format(cards=ltr(tr, cards_of_rank(tr, rank, count)))
    return button(label, callback_data=play.encode())


def _pick_label(tr: Translator, rank: Rank, held: int, chosen: int, required: Rank | None) -> str:
    """The cards of one rank, as in the hand text ("7 7"); once picked, the picked ones with a
    tick ("✅ 7"), so each tap visibly adds a card. The rank to claim, while not picked, is set
    between dots ("• 7 7 •"): a mark that cannot be taken for the tick of a pick."""
    if chosen:
        return "✅ " + cards_of_rank(tr, rank, chosen)
    cards = cards_of_rank(tr, rank, held)
    return f"• {cards} •" if rank is required else cards


def _pick_row_width(tr: Translator, held: Mapping[Rank, int], required: Rank | None) -> int:
    """Buttons per row, from the widest label a rank's button can take this turn (all its
    cards picked, or marked as the rank to claim): picking never moves a button under the
    thumb."""
    longest = 0
    for rank, count in held.items():
        picked = len(_pick_label(tr, rank, count, count, required))
        unpicked = len(_pick_label(tr, rank, count, 0, required))
        longest = max(longest, picked, unpicked)
    if longest <= PICK_LABEL_FITS_FOUR:
        return PICK_ROW
    return PICK_ROW - 1 if longest <= PICK_LABEL_FITS_THREE else PICK_ROW - 2


def _claim_label(tr: Translator, rank: Rank) -> str:
    """A rank to claim: "= Q", unlike a pick button, which shows cards held."""
    return f"= {rank_symbol(tr, rank)}"
