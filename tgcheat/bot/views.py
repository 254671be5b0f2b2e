"""Views: sessions and events turned into message texts and keyboards, in one reader's language.

Pure functions of their arguments. Every text a person reads comes from the catalog; every
user name is HTML-escaped here, before it enters a message.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from babel import Locale

from tgcheat.bot.callbacks import Op, Press
from tgcheat.bot.settings_texts import (
    PRESET_TEXTS,
    option_help,
    option_name,
    value_text,
)
from tgcheat.bot.texts import claim_phrase, rank_plural, rank_symbol
from tgcheat.engine.cards import CLAIMABLE_RANKS, Card, Rank, count_by_rank
from tgcheat.engine.events import ChallengeResolved, Passed
from tgcheat.engine.game import (
    Refusal,
    can_accept,
    can_pass,
    can_vote,
    challengeable,
    final_answerers,
    play_limit,
)
from tgcheat.engine.lobby import Lobby
from tgcheat.engine.match import Match, scoreboard
from tgcheat.engine.rules import (
    OPTION_NAMES,
    OPTION_VALUES,
    PRESETS,
    Challengers,
    FinalCheck,
    Passing,
    Rules,
    preset_of,
)
from tgcheat.engine.state import Claim, EndReason, GameState, Phase, Result
from tgcheat.i18n import N_, Translator, available_languages
from tgcheat.table.session import Session

#: Telegram allows 4096 characters; names are cut so that a table of ten never exceeds it.
MAX_NAME_CHARS = 64
KEYBOARD_ROW = 4


#: An inline keyboard as the Bot API takes it. Plain JSON rather than python-telegram-bot's
#: objects: a keyboard is built for every hand on every play, and only ever sent.
Button = dict[str, str]
Keyboard = dict[str, list[list[Button]]]


def button(text: str, *, callback_data: str | None = None, url: str | None = None) -> Button:
    if callback_data is not None:
        return {"text": text, "callback_data": callback_data}
    assert url is not None, "a button either calls back or opens a link"
    return {"text": text, "url": url}


def keyboard(rows: list[list[Button]]) -> Keyboard:
    return {"inline_keyboard": rows}


@dataclass(frozen=True, slots=True)
class View:
    text: str
    markup: Keyboard | None = None


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
        tr._("Rules: {rules} · /rules").format(rules=html.escape(rules_name(tr, rules))),
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
    markup = keyboard(
        [
            [button(tr._("➕ Join"), url=deep_link(bot_username, join_payload(session.chat_id)))],
            [
                button(tr._("▶️ Start"), callback_data=press.encode()),
                button(tr._("✖️ Cancel"), callback_data=cancel.encode()),
            ],
        ]
    )
    return View("\n".join(lines), markup)


def lobby_closed_view(tr: Translator, *, expired: bool = False) -> View:
    if expired:
        return View(tr._("🃏 Nobody started this game in time. Send /new to open another."))
    return View(tr._("🃏 This game was cancelled. Send /new to open another."))


def rules_name(tr: Translator, rules: Rules) -> str:
    preset = preset_of(rules)
    return tr._(PRESET_TEXTS[preset]) if preset is not None else tr._("house rules")


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
        if state.challenges:
            lines.append(
                tr._("❗ Cheat! called by {names}: the cards are turned over in a moment.").format(
                    names=", ".join(
                        name_html(state.players[s].name) for s, _, _ in state.challenges
                    )
                )
            )
        if state.vote_by is not None:
            lines.append(
                tr._("🙋 {name} asks to pass: the others vote in their private chat.").format(
                    name=name_html(state.players[state.vote_by].name)
                )
            )
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
) -> Keyboard | None:
    if state.phase is Phase.FINISHED:
        return None
    rows: list[list[Button]] = []
    last = state.last_claim
    rules = state.rules
    # Under `next`, only the next player answers, in their private chat (their hand message).
    answered_privately = (
        rules.final_check is FinalCheck.NEXT
        if state.phase is Phase.FINAL_CHECK
        else rules.challengers is Challengers.NEXT
    )
    if last is not None and not answered_privately:
        challenge = Press(Op.CHALLENGE, session.chat_id, session.game_id, last.number)
        cheat = button(tr._("❗ Cheat!"), callback_data=challenge.encode())
        if state.phase is Phase.FINAL_CHECK:
            accept = Press(Op.ACCEPT, session.chat_id, session.game_id, last.number)
            rows.append(
                [
                    button(tr._("✅ I believe you"), callback_data=accept.encode()),
                    cheat,
                ]
            )
        else:
            rows.append([cheat])
    rows.append(
        [button(tr._("🂠 My cards"), url=deep_link(bot_username, hand_payload(session.chat_id)))]
    )
    return keyboard(rows)


def reveal_view(tr: Translator, state: GameState, event: ChallengeResolved) -> View:
    claimant = name_html(state.players[event.claim.seat].name)
    lines = [
        tr._("❗ {challenger} calls Cheat on {claimant} ({claim}): {cards}").format(
            challenger=name_html(state.players[event.challenger].name),
            claimant=claimant,
            claim=claim_phrase(tr, len(event.claim.cards), event.claim.rank),
            cards=" ".join(card_label(tr, card) for card in event.revealed),
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


def passed_view(tr: Translator, state: GameState, event: Passed) -> str:
    name = name_html(state.players[event.seat].name)
    if event.by_vote:
        return tr._("⏭ {name} passes: everyone agreed.").format(name=name)
    if event.rank is not None:
        return tr._("⏭ {name} passes: every card of {rank} is in the pile.").format(
            name=name, rank=html.escape(rank_plural(tr, event.rank))
        )
    return tr._("⏭ {name} passes.").format(name=name)


def scoreboard_lines(tr: Translator, match: Match) -> list[str]:
    names = dict(match.players)
    lines = [
        tr.ngettext(
            "📊 Match after {games} game:", "📊 Match after {games} games:", match.games
        ).format(games=match.games)
    ]
    for user_id, score in scoreboard(match):
        lines.append(tr._("{name}: {score}").format(name=name_html(names[user_id]), score=score))
    if match.finished:
        if match.winner is not None:
            lines.append(
                tr._("🏆 {name} wins the match!").format(name=name_html(names[match.winner]))
            )
        else:
            lines.append(tr._("The match ends without a winner."))
    return lines


def next_game_markup(tr: Translator, session: Session) -> Keyboard:
    press = Press(Op.NEXT_GAME, session.chat_id, session.game_id, 0)
    return keyboard([[button(tr._("▶️ Next game"), callback_data=press.encode())]])


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


def card_label(tr: Translator, card: Card) -> str:
    """A revealed card in the reader's letters, with its suit for flavour: "7♣", "Д♥"."""
    suit = card.suit
    return rank_symbol(tr, card.rank) + (suit.symbol if suit is not None else "")


def hand_text(tr: Translator, held: Mapping[Rank, int]) -> str:
    """A hand as its ranks and how many of each (``count_by_rank``)."""
    return " · ".join(
        rank_symbol(tr, rank) + (f"×{count}" if count > 1 else "") for rank, count in held.items()
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
    held = count_by_rank(player.hand)
    lines = [
        tr._("🃏 Your cards in {group} ({count}):").format(
            group=f"<b>{html.escape(title)}</b>", count=len(player.hand)
        ),
        hand_text(tr, held) if player.hand else tr._("none"),
    ]
    if state.phase is Phase.FINISHED:
        lines += ["", tr._("The game is over.")]
        return View("\n".join(lines))
    if player.left:
        lines += ["", tr._("You have left this game.")]
        return View("\n".join(lines))
    selected = Counter(Rank.from_code(code) for code in selection)
    rows = _answer_rows(tr, session, state, seat, lines)
    limit = play_limit(state, seat)
    if limit > 0:
        lines.append("")
        lines.append(_turn_prompt(tr, state, limit))
        if selection:
            picked = " ".join(rank_symbol(tr, r) for r in sorted(selected.elements()))
            lines.append(tr._("Selected: {cards}").format(cards=picked))
        else:
            lines.append(tr._("Tap a rank to pick a card of it; tap again for one more."))
        rows += _play_rows(tr, session, state, seat, held, selected, lines)
    elif can_accept(state, seat) and state.rules.final_check is not FinalCheck.NEXT:
        lines += ["", tr._("Last cards were played: answer in the group.")]
    return View("\n".join(lines), keyboard(rows) if rows else None)


def _turn_prompt(tr: Translator, state: GameState, limit: int) -> str:
    rank = state.required
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
    tr: Translator, session: Session, state: GameState, seat: int, lines: list[str]
) -> list[list[Button]]:
    """What the player answers privately: a final play or the last play under `next`, or a
    vote on someone's request to pass."""
    rows: list[list[Button]] = []
    rules = state.rules
    final = state.final_claim
    if final is not None and rules.final_check is FinalCheck.NEXT and can_accept(state, seat):
        lines += ["", tr._("⏳ Last cards! {claim}").format(claim=claim_line(tr, state, final))]
        accept = Press(Op.ACCEPT, session.chat_id, session.game_id, final.number)
        cheat = Press(Op.CHALLENGE, session.chat_id, session.game_id, final.number)
        rows.append(
            [
                button(tr._("✅ I believe you"), callback_data=accept.encode()),
                button(tr._("❗ Cheat!"), callback_data=cheat.encode()),
            ]
        )
    elif rules.challengers is Challengers.NEXT and state.phase is Phase.PLAYING:
        for claim in challengeable(state, seat):
            lines += [
                "",
                tr._("Last play: {claim}. Believe it and play, or call Cheat!").format(
                    claim=claim_line(tr, state, claim)
                ),
            ]
            cheat = Press(Op.CHALLENGE, session.chat_id, session.game_id, claim.number)
            rows.append([button(tr._("❗ Cheat!"), callback_data=cheat.encode())])
    if can_vote(state, seat) and state.vote_by is not None:
        lines += [
            "",
            tr._("🙋 {name} asks to pass. Do you agree?").format(
                name=name_html(state.players[state.vote_by].name)
            ),
        ]
        yes = Press(Op.VOTE_YES, session.chat_id, session.game_id, state.plays)
        no = Press(Op.VOTE_NO, session.chat_id, session.game_id, state.plays)
        rows.append(
            [
                button(tr._("👍 Yes"), callback_data=yes.encode()),
                button(tr._("👎 No"), callback_data=no.encode()),
            ]
        )
    return rows


def _play_rows(
    tr: Translator,
    session: Session,
    state: GameState,
    seat: int,
    held: Mapping[Rank, int],
    selected: Counter[Rank],
    lines: list[str],
) -> list[list[Button]]:
    selection = "".join(r.code for r in sorted(selected.elements()))
    picks = Press(Op.PICK, session.chat_id, session.game_id, state.plays, selection)
    buttons = []
    for (rank, count), data in zip(held.items(), picks.encode_each(held), strict=True):
        chosen = selected[rank]
        label = rank_symbol(tr, rank) + (f" ×{count}" if count > 1 else "")
        if chosen:
            label = f"✅ {rank_symbol(tr, rank)} {chosen}/{count}"
        buttons.append(button(label, callback_data=data))
    rows = _in_rows(buttons)
    total = sum(selected.values())
    clear = Press(Op.CLEAR, session.chat_id, session.game_id, state.plays, "", None)
    clear_button = button(tr._("✖️ Clear"), callback_data=clear.encode())
    if total and state.required is not None:
        play = Press(
            Op.PLAY, session.chat_id, session.game_id, state.plays, selection, state.required
        )
        label = tr._("▶️ Play {claim}").format(claim=claim_phrase(tr, total, state.required))
        rows.append([clear_button, button(label, callback_data=play.encode())])
    elif total:
        # No rank is required: the player names one (any rank, even one they do not hold).
        lines.append(tr._("Now tap the rank you claim:"))
        play = Press(Op.PLAY, session.chat_id, session.game_id, state.plays, selection)
        claims = [
            button(rank_symbol(tr, rank), callback_data=data)
            for rank, data in zip(CLAIMABLE_RANKS, play.encode_each(CLAIMABLE_RANKS), strict=True)
        ]
        rows += _in_rows(claims, width=7)
        rows.append([clear_button])
    if can_pass(state, seat):
        label = tr._("🙋 Ask to pass") if state.rules.passing is Passing.VOTE else tr._("⏭ Pass")
        press = Press(Op.PASS, session.chat_id, session.game_id, state.plays)
        rows.append([button(label, callback_data=press.encode())])
    return rows


def _in_rows(buttons: list[Button], width: int = KEYBOARD_ROW) -> list[list[Button]]:
    return [buttons[i : i + width] for i in range(0, len(buttons), width)]


# --- settings and rules ----------------------------------------------------------------------


def settings_view(tr: Translator, chat_id: int, rules: Rules) -> View:
    lines = [
        tr._("⚙️ <b>Settings</b> for this group's next games"),
        tr._("Rules: {rules}").format(rules=html.escape(rules_name(tr, rules))),
        tr._("Tap a setting to change it, or pick a preset."),
    ]
    rows = [
        [
            button(
                f"{option_name(tr, option)}: {value_text(tr, rules.option_value(option))}",
                callback_data=Press(Op.SETTINGS_SHOW, chat_id, str(index), 0).encode(),
            )
        ]
        for index, option in enumerate(OPTION_NAMES)
    ]
    rows.append(
        [
            button(
                tr._(PRESET_TEXTS[name]),
                callback_data=Press(Op.SETTINGS_SET, chat_id, "p", number).encode(),
            )
            for number, name in enumerate(PRESETS)
        ]
    )
    return View("\n".join(lines), keyboard(rows))


def option_view(tr: Translator, chat_id: int, rules: Rules, index: int) -> View:
    option = OPTION_NAMES[index]
    current = rules.option_value(option)
    lines = [
        f"⚙️ <b>{html.escape(option_name(tr, option))}</b>: {html.escape(value_text(tr, current))}",
        html.escape(option_help(tr, option)),
    ]
    buttons = [
        button(
            ("✅ " if value == current else "") + value_text(tr, value),
            callback_data=Press(Op.SETTINGS_SET, chat_id, str(index), number).encode(),
        )
        for number, value in enumerate(OPTION_VALUES[option])
    ]
    rows = _in_rows(buttons, width=2)
    rows.append(
        [button(tr._("« Back"), callback_data=Press(Op.SETTINGS_SHOW, chat_id, "m", 0).encode())]
    )
    return View("\n".join(lines), keyboard(rows))


def language_view(tr: Translator, chat_id: int, current: str, group: bool) -> View:
    text = (
        tr._("🌐 The language of this group's game messages:")
        if group
        else tr._("🌐 The language of your private messages:")
    )
    buttons = [
        button(
            ("✅ " if language == current else "") + language_name(language),
            callback_data=Press(Op.LANGUAGE, chat_id, language, 0).encode(),
        )
        for language in available_languages()
    ]
    return View(text, keyboard(_in_rows(buttons, width=2)))


def language_name(language: str) -> str:
    """A language's name in itself ("Deutsch", "Русский"): how people find their own."""
    name = Locale.parse(language).get_display_name(language) or language
    return name[:1].upper() + name[1:]


def rules_view(tr: Translator, rules: Rules) -> View:
    lines = [
        tr._("🃏 <b>Rules in force</b>: {rules}").format(rules=html.escape(rules_name(tr, rules))),
        tr._(
            "Play 1 or more cards face down and claim their number and a rank: the number is "
            "true, the rank may be a lie. Doubt a claim? Call Cheat! The cards are turned "
            "over: a liar takes the pile, and so does a wrong accuser. Your last cards must be "
            "believed to win."
        ),
        "",
    ]
    for option in OPTION_NAMES:
        lines.append(
            f"• <b>{html.escape(option_name(tr, option))}</b>: "
            f"{html.escape(value_text(tr, rules.option_value(option)))}"
        )
    lines += ["", tr._("Admins change them with /settings.")]
    return View("\n".join(lines))


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
    Refusal.CHALLENGE_PENDING: N_("Wait: a Cheat! call is being settled."),
    Refusal.ALREADY_CHALLENGED: N_("You already called Cheat on that play."),
    Refusal.TOO_EARLY: N_("Not yet."),
    Refusal.PASSING_OFF: N_("Passing is not allowed in this game."),
    Refusal.RANK_NOT_EXHAUSTED: N_(
        "You may pass only when every card of the required rank is in the pile."
    ),
    Refusal.VOTE_PENDING: N_("Wait: the others are voting on a pass."),
    Refusal.VOTE_REFUSED: N_("Your request to pass was refused this turn: play."),
    Refusal.NO_VOTE: N_("There is no vote going on."),
    Refusal.NOT_A_VOTER: N_("This vote is not yours."),
    Refusal.ALREADY_VOTED: N_("You already voted."),
    Refusal.TOO_MANY_PLAYERS: N_("Too many players for these rules."),
}


def refusal_text(tr: Translator, reason: Refusal) -> str:
    return tr._(REFUSALS[reason])
