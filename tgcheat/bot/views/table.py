"""The table in the group: the live game, reveals, passes, the result and the match."""

from __future__ import annotations

import html
from collections.abc import Collection

from tgcheat.bot.callbacks import ClaimPress, Op, QuickPress, TablePress
from tgcheat.bot.texts import claim_phrase, rank_plural
from tgcheat.bot.views.base import (
    Button,
    Keyboard,
    View,
    app_link,
    button,
    card_label,
    claim_line,
    count_cards,
    deep_link,
    directed,
    hand_payload,
    joined,
    keyboard,
    mention_html,
    mirrored,
    moment,
    name_html,
    page,
)
from tgcheat.bot.views.profile import group_news_lines
from tgcheat.engine.events import ChallengeResolved, Passed, TriggerPulled
from tgcheat.engine.game import (
    final_answerers,
)
from tgcheat.engine.match import Match, scoreboard
from tgcheat.engine.rules import CHAMBERS
from tgcheat.engine.state import EndReason, GameState, Phase, Result
from tgcheat.i18n import N_, Translator
from tgcheat.table.audiences import table_answer
from tgcheat.table.awards import Award, best_liar, sharpest_eye
from tgcheat.table.chronicle import GameTally, Notice, NoticeKind
from tgcheat.table.computers import has_computers
from tgcheat.table.session import LONG_TURN_S, Session
from tgcheat.table.standing import GameNews


def table_view(
    tr: Translator,
    session: Session,
    state: GameState,
    bot_username: str,
    now_ms: int | None = None,
    news: GameNews | None = None,
    *,
    app: bool = False,
) -> View:
    """The table in the group; ``now_ms`` (when it is being published) shows the time left
    to answer last cards; ``news``: what counting the finished game brought; ``app``: the bot
    serves the Mini App (a button opens this game there)."""
    if state.phase is Phase.FINISHED and state.result is not None:
        return final_table_view(tr, session, state, state.result, news)
    lines = [tr._("🃏 <b>Cheat</b> · pile: {pile}").format(pile=count_cards(tr, len(state.pile)))]
    if session.quick:
        lines.append(tr._("⚡ A quick game"))
    if state.rules.revolver:
        lines.append(
            tr._("🔫 Round {round}: the revolver for whoever is wrong.").format(round=state.round)
        )
    lines += computers_line(tr, state)
    for seat, player in enumerate(state.players):
        marker = _turn_marker(tr) if state.phase is Phase.PLAYING and seat == state.turn else ""
        status = player_status(tr, state, seat)
        lines.append(
            tr._("{place}. {name} · {cards}").format(
                place=seat + 1, name=marker + name_html(player.name), cards=status
            )
        )
    lines.append("")
    if session.notice is not None:
        lines.append(notice_line(tr, state, session.notice))
    last = state.last_claim
    if state.phase is Phase.FINAL_CHECK and last is not None:
        lines.append(tr._("⏳ Last cards! {claim}").format(claim=claim_line(tr, state, last)))
        waiting = [state.players[s] for s in sorted(final_answerers(state) - state.accepted)]
        lines.append(
            tr._("{names}: believe it or call Cheat!").format(
                names=joined(
                    tr,
                    [
                        # At a quick table, strangers see each other's names only: no link.
                        name_html(p.name) if session.quick else mention_html(p.name, p.user_id)
                        for p in waiting
                    ],
                )
            )
        )
        left = _seconds_left(session, now_ms)
        if left is not None:
            lines.append(
                tr.ngettext(
                    "⏱ {seconds} second left, then it is believed.",
                    "⏱ {seconds} seconds left, then it is believed.",
                    left,
                ).format(seconds=left)
            )
    elif state.pull_by is not None:
        lines.append(pulling_line(tr, state, state.pull_by))
    elif state.phase is Phase.PLAYING:
        if last is not None:
            lines.append(tr._("Last play: {claim}").format(claim=claim_line(tr, state, last)))
        if state.challenges:
            lines.append(
                tr._("❗ Cheat! called by {names}: the cards are turned over in a moment.").format(
                    names=joined(
                        tr, [name_html(state.players[p.seat].name) for p in state.challenges]
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
        since = session.waiting_since_ms
        if since and state.rules.turn_timeout_s >= LONG_TURN_S:
            lines.append(tr._("⏳ Waiting since {moment}.").format(moment=moment(tr, since)))
    return page(tr, "\n".join(lines), _table_keyboard(tr, session, state, bot_username, app))


def player_status(tr: Translator, state: GameState, seat: int) -> str:
    """A seat's line on the table: its cards, or that it left; under the revolver also the
    chambers it has pulled, or that it was shot (and watches)."""
    player = state.players[seat]
    if player.shot:
        return tr._("💀 shot")
    status = tr._("left the game") if player.left else count_cards(tr, len(player.hand))
    if state.rules.revolver and not player.left:
        status += f" · 🔫 {player.pulls}/{CHAMBERS}"
    return status


def pull_view(tr: Translator, state: GameState, event: TriggerPulled) -> str:
    """The trigger pulled: the line the table waited for."""
    name = name_html(state.players[event.seat].name)
    if event.hit:
        text = tr._("💥 BANG! {name} is out.").format(name=name)
    else:
        text = tr._("🔫 <i>click</i>. {name} lives on (chamber {chamber} of {chambers}).").format(
            name=name, chamber=event.chamber, chambers=CHAMBERS
        )
    return directed(tr, text)


def _turn_marker(tr: Translator) -> str:
    """The arrow before the name of the player whose turn it is: it points at the name, which
    follows it, to the left in a right-to-left line ("‏4. ◀️ باسم")."""
    return "◀️ " if tr.rtl else "▶️ "


def _seconds_left(session: Session, now_ms: int | None) -> int | None:
    if now_ms is None or session.deadline_ms == 0 or session.deadline_ms <= now_ms:
        return None
    return (session.deadline_ms - now_ms + 999) // 1000


def notice_line(tr: Translator, state: GameState, notice: Notice) -> str:
    """What happened without anyone's press, as the table tells it."""
    name = name_html(state.players[notice.seat].name)
    match notice.kind:
        case NoticeKind.TIMED_OUT:
            return tr.ngettext(
                "⏰ {name} ran out of time: {count} card was played for them.",
                "⏰ {name} ran out of time: {count} cards were played for them.",
                notice.cards,
            ).format(name=name, count=notice.cards)
        case NoticeKind.BELIEVED_BY_CLOCK:
            return tr._("⏰ Time is up: the last cards are believed.")
        case NoticeKind.REMOVED_FOR_TIMEOUTS:
            return tr._("⏰ {name} missed too many turns and is out of the game.").format(name=name)
        case NoticeKind.KICKED:
            return tr._("🚪 {name} was removed from the game.").format(name=name)
        case NoticeKind.LEFT:
            return tr._("🚪 {name} left the game.").format(name=name)


def _turn_line(tr: Translator, state: GameState) -> str:
    name = name_html(state.players[state.turn].name)
    if state.required is None:
        return tr._("{name} to play, any rank").format(name=name)
    return tr._("{name} to play {rank}").format(
        name=name, rank=f"<b>{html.escape(rank_plural(tr, state.required))}</b>"
    )


def _table_keyboard(
    tr: Translator, session: Session, state: GameState, bot_username: str, app: bool = False
) -> Keyboard | None:
    if state.phase is Phase.FINISHED:
        return None
    rows: list[list[Button]] = []
    answer = table_answer(state)
    if answer is not None:
        number = answer.claim.number
        challenge = ClaimPress(
            Op.CHALLENGE, session.chat_id, session.game_id, number, session.topic
        )
        cheat = button(tr._("❗ Cheat!"), callback_data=challenge.encode())
        if answer.believe:
            accept = ClaimPress(Op.ACCEPT, session.chat_id, session.game_id, number, session.topic)
            rows.append(
                [
                    button(tr._("✅ I believe you"), callback_data=accept.encode()),
                    cheat,
                ]
            )
        else:
            rows.append([cheat])
    if not session.private_table:
        # In a game against the computer, or a quick game, the hand is in the same chat,
        # just below.
        link = deep_link(bot_username, hand_payload(session.place))
        row = [button(tr._("🃏 My cards"), url=link)]
        if app:
            row.append(app_button(tr, bot_username, session))
        rows.append(row)
    return keyboard(rows)


def app_button(tr: Translator, bot_username: str, session: Session) -> Button:
    """Opens the Mini App on this game, from the group: to play there, or to watch."""
    return button(tr._("📱 Table in the app"), url=app_link(bot_username, session.place))


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
        + _penalty_phrase(tr, state, event),
    ]
    return page(tr, "\n".join(lines))


def unreachable_view(tr: Translator, state: GameState, user_ids: Collection[int]) -> View:
    """The group told which players the bot cannot send their cards to."""
    names = joined(
        tr, (name_html(player.name) for player in state.players if player.user_id in user_ids)
    )
    text = tr._(
        "{names}: I can't send you your cards. Tap <b>🃏 My cards</b> on the "
        "table and press <b>Start</b> in our private chat."
    ).format(names=names)
    return View(directed(tr, text))


def _penalty_phrase(tr: Translator, state: GameState, event: ChallengeResolved) -> str:
    taker = state.players[event.taker]
    if state.rules.revolver:
        # The pull itself is a line of its own, after the pause (``PULL_PAUSE_MS``).
        return tr._("{name} must pull the trigger…").format(name=name_html(taker.name))
    return tr.ngettext(
        "{name} takes the pile: {count} card.",
        "{name} takes the pile: {count} cards.",
        event.taken,
    ).format(name=name_html(taker.name), count=event.taken)


def passed_view(tr: Translator, state: GameState, event: Passed) -> str:
    name = name_html(state.players[event.seat].name)
    if event.by_vote:
        text = tr._("⏭ {name} passes: everyone agreed.").format(name=name)
    elif event.rank is not None:
        text = tr._("⏭ {name} passes: every card of {rank} is in the pile.").format(
            name=name, rank=html.escape(rank_plural(tr, event.rank))
        )
    else:
        text = tr._("⏭ {name} passes.").format(name=name)
    return directed(tr, text)


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
    press = TablePress(Op.NEXT_GAME, session.chat_id, session.game_id, session.topic)
    return mirrored(tr, keyboard([[button(tr._("▶️ Next game"), callback_data=press.encode())]]))


def final_table_view(
    tr: Translator,
    session: Session,
    state: GameState,
    result: Result,
    news: GameNews | None = None,
) -> View:
    """The table once the game is over: the winner, the places, the achievements earned and a
    season's turn (``news``), what the game revealed, and the way on (the match's next game, or
    another game with the same players)."""
    lines = [
        *result_lines(tr, state, result),
        *group_news_lines(tr, state, news),
        *computers_line(tr, state),
        "",
        *summary_lines(tr, state, session.tally),
    ]
    match = session.match
    if match is not None:
        lines += ["", *scoreboard_lines(tr, match)]
    if session.quick:
        # A quick table is never made again: another quick game is asked for.
        quick = QuickPress(join=True)
        markup = mirrored(
            tr, keyboard([[button(tr._("⚡ Another quick game"), callback_data=quick.encode())]])
        )
    elif match is not None and not match.finished:
        markup = next_game_markup(tr, session)
    else:
        again = TablePress(Op.PLAY_AGAIN, session.chat_id, session.game_id, session.topic)
        row = [button(tr._("🔁 Play again"), callback_data=again.encode())]
        if not session.against_computer:
            # Those who cannot play again now hear of the group's next game in private.
            notify = TablePress(Op.NOTIFY, session.chat_id, session.game_id, session.topic)
            row.append(button(tr._("🔔 Next game"), callback_data=notify.encode()))
        markup = mirrored(tr, keyboard([row]))
    # The game is over: what nobody saw during it may be told (on request, once).
    story = TablePress(Op.STORY, session.chat_id, session.game_id, session.topic)
    story_row = mirrored(
        tr, keyboard([[button(tr._("📜 How it went"), callback_data=story.encode())]])
    )
    markup = keyboard(markup["inline_keyboard"] + story_row["inline_keyboard"])
    return View(directed(tr, "\n".join(lines)), markup)


def computers_line(tr: Translator, state: GameState) -> list[str]:
    """A game with computer players says so."""
    if not has_computers(state):
        return []
    return [tr._("🤖 A game with computer players.")]


def result_lines(tr: Translator, state: GameState, result: Result) -> list[str]:
    players = state.players
    headline = {
        EndReason.WENT_OUT: N_("🏆 {name} played out their hand and wins!"),
        EndReason.LAST_PLAYER: N_("🏆 Everyone else left: {name} wins!"),
        EndReason.MOVE_CAP: N_("🏆 {plays} plays reached: {name} holds the fewest cards and wins!"),
        EndReason.STOPPED: N_("🛑 The game was stopped."),
        EndReason.LAST_ALIVE: N_("🏆 {name} is the last one alive and wins!"),
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
                names=joined(
                    tr, (name_html(players[s].name) for s, place in result.places if place == 1)
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
                cards=player_status(tr, state, seat),
            )
        )
    return lines


def summary_lines(tr: Translator, state: GameState, tally: GameTally) -> list[str]:
    """The game in a few lines, and its awards (the game is over: the bluffs nobody caught
    are counted too, never shown one by one; that is the story's, on request)."""
    lines = [
        tr.ngettext("📊 {count} play", "📊 {count} plays", state.plays).format(count=state.plays)
        + " · "
        + tr.ngettext("{count} bluff caught", "{count} bluffs caught", tally.bluffs_caught).format(
            count=tally.bluffs_caught
        )
        + " · "
        + tr.ngettext("{count} wrong call", "{count} wrong calls", tally.wrong_calls).format(
            count=tally.wrong_calls
        )
    ]
    if tally.biggest_pile is not None:
        taken, seat = tally.biggest_pile
        lines.append(
            tr.ngettext(
                "🧺 Biggest pile taken: {count} card, by {name}.",
                "🧺 Biggest pile taken: {count} cards, by {name}.",
                taken,
            ).format(count=taken, name=name_html(state.players[seat].name))
        )
    # The awards: the biggest pile above is the unluckiest's; players level share an award.
    # An award shared has a title of its own: "Best liars: Ann and Bob".
    sharpest = sharpest_eye(tally, len(state.players))
    if sharpest is not None and len(sharpest.seats) == 1:
        lines.append(
            tr.ngettext(
                "🔎 Sharpest eye: {name}, {count} bluff caught.",
                "🔎 Sharpest eye: {name}, {count} bluffs caught.",
                sharpest.count,
            ).format(name=_names(tr, state, sharpest), count=sharpest.count)
        )
    elif sharpest is not None:
        lines.append(
            tr.ngettext(
                "🔎 Sharpest eyes: {names}, each with {count} bluff caught.",
                "🔎 Sharpest eyes: {names}, each with {count} bluffs caught.",
                sharpest.count,
            ).format(names=_names(tr, state, sharpest), count=sharpest.count)
        )
    liar = best_liar(tally, len(state.players))
    if liar is not None and len(liar.seats) == 1:
        lines.append(
            tr.ngettext(
                "🤥 Best liar: {name}, {count} bluff nobody caught.",
                "🤥 Best liar: {name}, {count} bluffs nobody caught.",
                liar.count,
            ).format(name=_names(tr, state, liar), count=liar.count)
        )
    elif liar is not None:
        lines.append(
            tr.ngettext(
                "🤥 Best liars: {names}, each with {count} bluff nobody caught.",
                "🤥 Best liars: {names}, each with {count} bluffs nobody caught.",
                liar.count,
            ).format(names=_names(tr, state, liar), count=liar.count)
        )
    return lines


def _names(tr: Translator, state: GameState, award: Award) -> str:
    """Who earned an award: "Ann", "Ann and Bob", "Ann, Bob and Cleo"."""
    *others, last = (name_html(state.players[seat].name) for seat in award.seats)
    if not others:
        return last
    return tr._("{names} and {name}").format(names=joined(tr, others), name=last)


def pulling_line(tr: Translator, state: GameState, seat: int) -> str:
    """The pause before a pull of the revolver's trigger (``penalty=revolver``): who is about
    to pull it."""
    text = tr._("🔫 {name} puts the revolver to their head…").format(
        name=name_html(state.players[seat].name)
    )
    return directed(tr, text)
