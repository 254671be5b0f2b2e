"""The table in the group: the live game, reveals, passes, the result and the match."""

from __future__ import annotations

import html

from tgcheat.bot.callbacks import ClaimPress, Op, TablePress
from tgcheat.bot.texts import claim_phrase, rank_plural
from tgcheat.bot.views.base import (
    Button,
    Keyboard,
    View,
    button,
    card_label,
    claim_line,
    count_cards,
    deep_link,
    hand_payload,
    keyboard,
    name_html,
)
from tgcheat.engine.events import ChallengeResolved, Passed
from tgcheat.engine.game import (
    final_answerers,
)
from tgcheat.engine.match import Match, scoreboard
from tgcheat.engine.state import EndReason, GameState, Phase, Result
from tgcheat.i18n import N_, Translator
from tgcheat.table.audiences import table_answer
from tgcheat.table.session import Session


def table_view(tr: Translator, session: Session, state: GameState, bot_username: str) -> View:
    lines = [tr._("🃏 <b>Cheat</b> · pile: {pile}").format(pile=count_cards(tr, len(state.pile)))]
    for seat, player in enumerate(state.players):
        marker = "▶️ " if state.phase is Phase.PLAYING and seat == state.turn else ""
        status = tr._("left the game") if player.left else count_cards(tr, len(player.hand))
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
                        name_html(state.players[pending.seat].name) for pending in state.challenges
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
    answer = table_answer(state)
    if answer is not None:
        number = answer.claim.number
        challenge = ClaimPress(Op.CHALLENGE, session.chat_id, session.game_id, number)
        cheat = button(tr._("❗ Cheat!"), callback_data=challenge.encode())
        if answer.believe:
            accept = ClaimPress(Op.ACCEPT, session.chat_id, session.game_id, number)
            rows.append(
                [
                    button(tr._("✅ I believe you"), callback_data=accept.encode()),
                    cheat,
                ]
            )
        else:
            rows.append([cheat])
    rows.append(
        [button(tr._("🃏 My cards"), url=deep_link(bot_username, hand_payload(session.chat_id)))]
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
    press = TablePress(Op.NEXT_GAME, session.chat_id, session.game_id)
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
                cards=count_cards(tr, len(players[seat].hand)),
            )
        )
    lines.append("")
    lines.append(tr._("Send /new for another game."))
    return View("\n".join(lines))


