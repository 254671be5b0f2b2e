// The Mini App: the game's table and the player's hand, live. Plain JavaScript, no framework and
// no build step: the server sends every text in the player's language, and this script draws
// the table, keeps the cards picked and talks to /app/api. Telegram's launch parameters come in
// the URL's fragment (tgWebAppData: the signed initData; tgWebAppThemeParams: the colours).
"use strict";
(function () {
  const launch = new URLSearchParams(location.hash.slice(1));
  const initData = launch.get("tgWebAppData") || "";
  const initFields = new URLSearchParams(initData);
  // None named (the menu button): the server finds the person's game and names it.
  let place = new URLSearchParams(location.search).get("p") ||
    launch.get("tgWebAppStartParam") || initFields.get("start_param") || "";
  const platform = launch.get("tgWebAppPlatform") || "unknown";
  const version = launch.get("tgWebAppVersion") || "6.0";
  const auth = { Authorization: "tma " + initData };
  const $ = (id) => document.getElementById(id);
  const REPORT_EVERY_MS = 12000;
  let state = null;
  let picked = new Map(); // rank code -> how many of that rank's cards are picked
  let busy = false;
  let revealTimer = 0;
  let reported = 0;
  let lastPull = null; // the game's last pull of the revolver's trigger shown ("game:seq")
  let homePoll = 0;
  let liveAbort = null;

  // --- Telegram: events to the app and from it ------------------------------------------------
  const inTelegram = !!(window.TelegramWebviewProxy || (window.external && "notify" in window.external) ||
    window.parent !== window);
  function atLeast(wanted) {
    const have = version.split(".").map(Number), want = wanted.split(".").map(Number);
    for (let i = 0; i < Math.max(have.length, want.length); i++) {
      const a = have[i] || 0, b = want[i] || 0;
      if (a !== b) return a > b;
    }
    return true;
  }
  function postEvent(type, data) {
    const body = data === undefined ? "" : JSON.stringify(data);
    try {
      if (window.TelegramWebviewProxy) window.TelegramWebviewProxy.postEvent(type, body);
      else if (window.external && "notify" in window.external)
        window.external.notify(JSON.stringify({ eventType: type, eventData: data }));
      else if (window.parent !== window)
        window.parent.postMessage(JSON.stringify({ eventType: type, eventData: data }), "*");
    } catch (e) { /* outside Telegram: nothing to tell */ }
  }
  const notify = (kind) => postEvent("web_app_trigger_haptic_feedback", { type: "notification", notification_type: kind });
  const impact = (style) => postEvent("web_app_trigger_haptic_feedback", { type: "impact", impact_style: style });
  // The bottom buttons of Telegram itself, where the client has them (Secondary: Bot API 7.10).
  const native = inTelegram && atLeast("7.10");
  if (native) document.body.classList.add("native");
  function applyTheme(theme) {
    for (const [key, value] of Object.entries(theme || {}))
      document.documentElement.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), value);
    if (theme && theme.bg_color) {
      postEvent("web_app_set_background_color", { color: theme.bg_color });
      postEvent("web_app_set_header_color", { color: theme.bg_color });
    }
  }
  function applyInsets(prefix, insets) {
    for (const side of ["top", "bottom", "left", "right"])
      document.documentElement.style.setProperty(`--tg-${prefix}-inset-${side}`, (insets && insets[side] || 0) + "px");
  }
  try { applyTheme(JSON.parse(launch.get("tgWebAppThemeParams") || "{}")); } catch (e) { /* no theme */ }
  const handlers = {
    theme_changed: (d) => applyTheme(d && d.theme_params),
    safe_area_changed: (d) => applyInsets("safe-area", d),
    content_safe_area_changed: (d) => applyInsets("content-safe-area", d),
    main_button_pressed: () => mainAction && mainAction(),
    secondary_button_pressed: () => secondaryAction && secondaryAction(),
    write_access_requested: (d) => { if (d && d.status === "allowed") act({ op: "join" }); },
    visibility_changed: (d) => report(!!(d && d.is_visible)),
  };
  window.Telegram = window.Telegram || {};
  const previous = window.Telegram.WebView;
  window.Telegram.WebView = {
    receiveEvent(type, data) {
      if (handlers[type]) handlers[type](data);
      if (previous && previous.receiveEvent) previous.receiveEvent(type, data);
    },
  };
  postEvent("web_app_ready");
  postEvent("web_app_expand");
  if (atLeast("8.0")) {
    postEvent("web_app_request_safe_area");
    postEvent("web_app_request_content_safe_area");
    // Fullscreen on phones, where the client allows it; a desktop keeps its window.
    if (platform === "android" || platform === "ios") postEvent("web_app_request_fullscreen");
  }

  // Telegram's bottom buttons, set only when what they show changes.
  let mainAction = null, secondaryAction = null, shownButtons = "";
  function bottomButtons(main, secondary) {
    mainAction = main && main.run; secondaryAction = secondary && secondary.run;
    const key = JSON.stringify([main && main.text, secondary && secondary.text]);
    if (!native || key === shownButtons) return;
    shownButtons = key;
    postEvent("web_app_setup_main_button", main ? { is_visible: true, is_active: true, text: main.text,
      color: getComputedStyle(document.body).getPropertyValue("--accent").trim() || undefined } : { is_visible: false });
    postEvent("web_app_setup_secondary_button", secondary ? { is_visible: true, is_active: true, text: secondary.text,
      position: "left", color: "#d33333", text_color: "#ffffff" } : { is_visible: false });
  }
  let swipes = null, confirm = null;
  function behaviour(picking, myTurn) {
    if (atLeast("7.7") && swipes !== !picking) {
      swipes = !picking;
      postEvent("web_app_setup_swipe_behavior", { allow_vertical_swipe: swipes });
    }
    if (confirm !== myTurn) {
      confirm = myTurn;
      postEvent("web_app_setup_closing_behavior", { need_confirmation: myTurn });
    }
  }

  // --- drawing --------------------------------------------------------------------------------
  const SUITS = { c: ["♣", ""], s: ["♠", ""], h: ["♥", "r"], d: ["♦", "r"] };
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function button(text, cls, onClick) {
    const b = el("button", "act " + (cls || ""), text);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }
  const seated = () => state && typeof state.me === "number";
  const myTurn = () => seated() && state.phase === "playing" && state.turn === state.me && !!state.play;
  const pickedCount = () => [...picked.values()].reduce((a, b) => a + b, 0);

  function render() {
    const s = state;
    document.documentElement.dir = s.rtl ? "rtl" : "ltr";
    $("head").textContent = s.title || (s.table && s.table[0]) || "Cheat";
    const badge = $("badge");
    badge.hidden = !s.watching;
    badge.textContent = s.watching || "";
    $("home").hidden = true;
    clearTimeout(homePoll);
    if (s.quick && !s.seats && !s.lobby) return renderHome();
    if (s.refused && !s.seats && !s.lobby) { showToast(s.refused); return; }
    $("lobby").hidden = !s.lobby;
    $("table").hidden = !s.seats;
    if (s.lobby) return renderLobby();
    const finished = s.phase === "finished";
    const seats = $("seats");
    seats.replaceChildren();
    s.seats.forEach((seat, i) => {
      const li = el("li");
      li.dataset.seat = i;
      if (s.phase === "playing" && i === s.turn) li.classList.add("turn");
      if (i === s.me) li.classList.add("me");
      if (seat.left) li.classList.add("left");
      if (finished && i === s.winner) li.classList.add("won");
      const av = el("span", "av", finished && i === s.winner ? "🏆" : [...seat.name][0] || "?");
      li.append(av, el("span", "name", seat.name), el("span", "count", "🃏" + seat.cards));
      seats.append(li);
    });
    const pile = $("pile");
    pile.classList.toggle("empty", !s.pile);
    $("pile-count").textContent = s.pile;
    const claim = $("claim");
    claim.replaceChildren();
    claim.classList.toggle("final", s.phase === "final_check");
    $("felt").classList.toggle("over", finished);
    if (finished && typeof s.winner === "number") claim.textContent = `🏆 ${s.seats[s.winner].name}`;
    else if (s.claim) claim.textContent = `${s.claim.name}: ${s.claim.text}`;
    const lines = s.table || [];
    const blank = lines.indexOf("");
    $("status").textContent = finished ? lines.join("\n") : (blank >= 0 ? lines.slice(blank + 1).join("\n") : "");
    renderAnswers();
    renderHand();
    behaviour(pickedCount() > 0, myTurn());
    tick();
  }

  function renderLobby() {
    const s = state;
    const names = $("lobby-names");
    names.replaceChildren(...s.lobby.map((name) => el("li", "", name)));
    $("status").textContent = "";
    $("hand").hidden = true;
    const box = $("answers");
    box.replaceChildren();
    if (!s.joined) box.append(button(s.join, "", join));
    bottomButtons(null, null);
  }

  // The home (no game): ⚡ Quick game, or the wait for one with 🚪 Stop waiting. While the
  // person waits, the page looks again every few seconds and opens the game once it is dealt.
  function renderHome() {
    const s = state, q = s.quick;
    $("table").hidden = true;
    $("lobby").hidden = true;
    $("hand").hidden = true;
    $("answers").replaceChildren();
    $("home").hidden = false;
    $("home-text").textContent = q.waiting || s.refused || "";
    const actions = $("home-actions");
    actions.replaceChildren();
    if (q.join) actions.append(button(q.join, "", () => quick(true)));
    if (q.leave) actions.append(button(q.leave, "alt", () => quick(false)));
    bottomButtons(null, null);
    if (q.waiting) homePoll = setTimeout(lookAgain, 3000);
  }
  async function quick(join) {
    if (busy) return;
    busy = true;
    impact("medium");
    try {
      const r = await fetch("/app/api/quick", {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ join }),
      });
      if (r.status === 401) return locked();
      const body = await r.json();
      if (r.status === 409 && body.refused) { notify("error"); showToast(body.refused); }
      found(body);
    } catch (e) { /* the page looks again */ } finally { busy = false; }
  }
  async function lookAgain() {
    try {
      const r = await fetch("/app/api/state", { headers: auth });
      if (r.status === 401) return locked();
      found(await r.json());
    } catch (e) { homePoll = setTimeout(lookAgain, 3000); }
  }
  function found(next) {
    if (next.seats || next.lobby) {
      // A game: the live stream follows it from now on.
      state = null;
      accept(next);
      if (liveAbort) liveAbort.abort();
      return;
    }
    if (!next.quick) return;
    next.received = Date.now();
    state = next;
    render();
  }

  function join() {
    // The bot may write to someone who never started it once they allow it: asked here,
    // then joined when Telegram says it is allowed (write_access_requested).
    if (inTelegram && atLeast("6.9")) postEvent("web_app_request_write_access");
    else act({ op: "join" });
  }

  function renderAnswers() {
    const box = $("answers");
    box.replaceChildren();
    const s = state;
    const row = el("div", "row");
    let cheat = null;
    for (const a of s.answers || []) {
      const run = () => act({ op: a.op, claim: a.claim, plays: s.plays });
      const cls = a.op === "cheat" ? "danger" : a.op === "believe" || a.op === "no" ? "alt" : "";
      const b = button(a.label, cls, run);
      if (a.op === "cheat" && !cheat) { cheat = { text: a.label, run }; b.classList.add("native"); }
      row.append(b);
    }
    if (row.childElementCount) box.append(row);
    if (s.pass) box.append(button(s.pass, "alt", () => act({ op: "pass", plays: s.plays })));
    secondary = cheat;
  }
  let secondary = null;

  function stacks() {
    const found = [];
    for (const card of state.hand || []) {
      const last = found[found.length - 1];
      if (last && last.rank === card.rank) last.cards.push(card);
      else found.push({ rank: card.rank, label: card.label, cards: [card] });
    }
    return found;
  }

  function renderHand() {
    const s = state;
    const hand = $("hand");
    hand.hidden = !seated() || (s.phase === "finished" && !s.hand.length);
    if (!seated()) { bottomButtons(null, secondary); return; }
    $("hand-title").textContent = s.handTitle || "";
    const cards = $("cards");
    const all = stacks();
    const have = new Map(all.map((st) => [st.rank, st.cards.length]));
    for (const [rank, n] of picked) if (!have.has(rank) || !s.play) picked.delete(rank); else if (n > have.get(rank)) picked.set(rank, have.get(rank));
    cards.replaceChildren();
    for (const st of all) {
      const b = el("button", "stack");
      b.type = "button";
      b.dataset.rank = st.rank;
      const n = st.cards.length;
      if (n > 1) b.classList.add(n > 2 ? "n3" : "n2");
      const chosen = picked.get(st.rank) || 0;
      if (chosen) b.classList.add("sel");
      b.setAttribute("aria-label", `${st.label} ×${n}`);
      b.disabled = !s.play;
      const face = el("span", "face");
      const rank = el("span", "rank" + (st.rank === "X" || !st.cards[0].suit ? " joker" : ""), st.label);
      const suits = el("span", "suits");
      // Suits never matter in Cheat: each one held is shown once.
      for (const suit of [...new Set(st.cards.map((card) => card.suit))]) {
        const [symbol, red] = SUITS[suit] || ["★", ""];
        suits.append(el("span", red, symbol));
      }
      face.append(rank, suits);
      b.append(face);
      if (n > 1) b.append(el("span", "n", "×" + n));
      b.append(el("span", "p", String(chosen)));
      holdable(b, () => pick(st.rank, n, false), () => pick(st.rank, n, true));
      cards.append(b);
    }
    const play = s.play;
    const claims = $("claims");
    const controls = $("controls");
    claims.replaceChildren();
    controls.replaceChildren();
    if (!play) { $("prompt").textContent = ""; bottomButtons(null, secondary); return; }
    const count = pickedCount();
    $("prompt").textContent = count ? play.claimHint : play.prompt + "\n" + play.tap;
    if (!count) { bottomButtons(null, secondary); return; }
    let main = null;
    if (s.required) {
      const label = play.claims[s.required][count - 1];
      main = { text: label, run: () => playCards(s.required) };
      controls.append(button(label, "native", main.run));
    } else {
      for (const [rank, label] of Object.entries(play.rankLabels)) {
        const b = button(label, "", () => playCards(rank));
        b.title = play.claims[rank][count - 1];
        b.dataset.rank = rank;
        claims.append(b);
      }
    }
    controls.append(button(play.clear, "alt", () => { picked.clear(); impact("light"); render(); }));
    bottomButtons(main, secondary);
  }

  // A tap, or a long press (all of them), on a stack.
  function holdable(node, tap, hold) {
    let timer = 0, held = false;
    node.addEventListener("pointerdown", () => {
      held = false;
      timer = setTimeout(() => { held = true; hold(); }, 450);
    });
    const cancel = () => clearTimeout(timer);
    node.addEventListener("pointerup", cancel);
    node.addEventListener("pointerleave", cancel);
    node.addEventListener("contextmenu", (e) => e.preventDefault());
    node.addEventListener("click", () => { if (!held) tap(); held = false; });
  }

  function pick(rank, n, all) {
    if (!state.play || busy) return;
    const now = picked.get(rank) || 0;
    const others = pickedCount() - now;
    const room = state.play.limit - others;
    let next = all ? (now === Math.min(n, room) ? 0 : Math.min(n, room)) : (now >= n ? 0 : now + 1);
    if (next > room) { notify("warning"); return; }
    if (next) picked.set(rank, next); else picked.delete(rank);
    postEvent("web_app_trigger_haptic_feedback", { type: "selection_change" });
    render();
  }

  function playCards(rank) {
    act({ op: "play", plays: state.plays, cards: Object.fromEntries(picked), rank });
  }

  function tick() {
    const s = state;
    const bar = $("bar").firstElementChild;
    const now = s && s.now !== undefined ? s.now + (Date.now() - s.received) : 0;
    let share = 0;
    if (s && s.deadline && s.phase !== "finished" && s.since && s.deadline > s.since)
      share = Math.max(0, Math.min(1, (s.deadline - now) / (s.deadline - s.since)));
    bar.style.width = (share * 100).toFixed(1) + "%";
    $("bar").classList.toggle("low", share > 0 && share < 0.25);
    const turn = document.querySelector("#seats li.turn .av");
    if (turn) turn.style.setProperty("--p", share.toFixed(3));
  }
  setInterval(() => state && tick(), 250);

  // --- the reveal: the challenged cards turn over, the verdict, the pile goes to its taker ----
  function showReveal(reveals) {
    const last = reveals[reveals.length - 1];
    const box = $("reveal");
    box.textContent = reveals.map((r) => r.text).join("\n\n");
    box.classList.toggle("true", !last.lie);
    box.hidden = false;
    const flip = $("flip");
    flip.replaceChildren(el("div", "verdict", last.lie ? "❗" : "✅"));
    for (const card of last.cards) {
      const [symbol, red] = SUITS[card.suit] || ["★", ""];
      const mini = el("span", "mini");
      const face = el("i");
      face.dataset.face = card.label + "\n" + symbol;
      if (red) face.style.setProperty("--c", "#c62828");
      mini.append(face);
      flip.append(mini);
    }
    flip.hidden = false;
    const pile = $("pile");
    const taker = document.querySelector(`#seats li[data-seat="${last.taker}"]`);
    if (taker) {
      const a = pile.getBoundingClientRect(), b = taker.getBoundingClientRect();
      pile.style.setProperty("--tx", `${b.left + b.width / 2 - a.left - a.width / 2}px`);
      pile.style.setProperty("--ty", `${b.top + b.height / 2 - a.top - a.height / 2}px`);
    }
    notify(last.lie ? "error" : "success");
    clearTimeout(revealTimer);
    setTimeout(() => { pile.classList.add("take"); }, 450);
    setTimeout(() => { pile.classList.remove("take"); flip.hidden = true; }, 2200);
    revealTimer = setTimeout(() => { box.hidden = true; }, 15000);
  }
  // The pause before the pull: who puts the revolver to their head, below the reveal.
  function showPulling(text) {
    const box = $("reveal");
    if (box.hidden) box.textContent = text;
    else if (!box.textContent.endsWith(text)) box.textContent += "\n\n" + text;
    box.classList.add("suspense");
    box.hidden = false;
    clearTimeout(revealTimer);
  }
  // The revolver's pull, as the chat's line says it: "💥 BANG!" or "click".
  function showPull(pull) {
    const box = $("reveal");
    box.textContent = pull.text;
    box.classList.remove("true", "suspense");
    box.classList.toggle("click", !pull.hit);
    box.hidden = false;
    notify(pull.hit ? "error" : "warning");
    clearTimeout(revealTimer);
    revealTimer = setTimeout(() => { box.hidden = true; }, 15000);
  }
  function showToast(text) {
    const t = $("toast");
    t.textContent = text;
    t.hidden = false;
    setTimeout(() => { t.hidden = true; }, 3500);
  }

  function accept(next) {
    if (state && next.v < state.v) return; // an older answer than what is shown
    next.received = Date.now();
    const wasMine = myTurn();
    const wasOn = state && state.phase !== "finished";
    state = next;
    if (next.place) place = next.place;
    render();
    if (next.reveals && next.reveals.length) { $("reveal").classList.remove("click"); showReveal(next.reveals); }
    const pull = next.pull ? next.game + ":" + next.pull.seq : null;
    // A pull made since the page last looked is told once (not the one it opened on).
    if (pull && pull !== lastPull && (lastPull !== null || wasOn)) showPull(next.pull);
    if (next.pulling) showPulling(next.pulling);
    else $("reveal").classList.remove("suspense");
    if (pull) lastPull = pull;
    else if (next.seats && lastPull === null) lastPull = "";
    if (!wasMine && myTurn()) notify("success"); // your turn, with a haptic instead of a message
    if (wasOn && next.phase === "finished") notify("success");
    if (seated() && next.phase !== "finished" && Date.now() - reported > REPORT_EVERY_MS) report(true);
  }

  // --- the API --------------------------------------------------------------------------------
  function requestId() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  async function act(action) {
    if (busy) return;
    busy = true;
    impact("medium");
    try {
      const r = await fetch("/app/api/act", {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ ...action, place, game: state && state.game, request: requestId() }),
      });
      if (r.status === 401) return locked();
      const body = await r.json();
      if (body.refused) { notify("error"); showToast(body.refused); }
      else { picked.clear(); }
      if (body.seats || body.lobby) accept(body);
    } catch (e) { /* the live stream shows the state when it is back */ } finally { busy = false; }
  }
  function locked() {
    document.body.dataset.locked = "1";
    $("head").textContent = "🔒";
  }

  // Whether this page is seen: while it is, the player's private chat gets no hand edits and
  // no turn message; hidden or closed, the chat takes over at once.
  function report(visible) {
    if (!seated() || !place) return;
    reported = visible ? Date.now() : 0;
    const body = JSON.stringify({ place, visible, init: initData });
    if (!visible && navigator.sendBeacon && navigator.sendBeacon("/app/api/seen", new Blob([body], { type: "text/plain" }))) return;
    fetch("/app/api/seen", { method: "POST", headers: { "Content-Type": "application/json" }, body, keepalive: true })
      .catch(() => { /* the report runs out by itself */ });
  }
  document.addEventListener("visibilitychange", () => report(document.visibilityState === "visible"));
  window.addEventListener("pagehide", () => report(false));
  setInterval(() => {
    if (document.visibilityState === "visible" && state && state.phase !== "finished") report(true);
  }, REPORT_EVERY_MS);

  // Live updates: server-sent events read with fetch (EventSource cannot send the initData
  // header); a lost connection is opened again and shows the current state.
  async function live() {
    for (;;) {
      try {
        liveAbort = new AbortController();
        const r = await fetch("/app/api/events?place=" + encodeURIComponent(place),
          { headers: auth, signal: liveAbort.signal });
        if (r.status === 401) return locked();
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            for (const line of block.split("\n"))
              if (line.startsWith("data: ")) accept(JSON.parse(line.slice(6)));
          }
        }
      } catch (e) { /* connection lost */ }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  // The profile page (?v=profile, /profile's button): the figures, and a card of them to
  // share into a chat the person picks. Telegram.WebApp.shareMessage is this event: the id
  // names a message the server had Telegram keep for this person (savePreparedInlineMessage).
  async function profile() {
    $("hand").hidden = true;
    $("answers").hidden = true;
    const r = await fetch("/app/api/profile", { headers: auth });
    if (r.status === 401) return locked();
    const p = await r.json();
    document.documentElement.dir = p.rtl ? "rtl" : "ltr";
    $("head").textContent = p.title;
    const seats = $("seats");
    seats.replaceChildren();
    seats.className = "profile";
    for (const line of p.lines) seats.append(el("li", "", line));
    $("status").replaceChildren();
    if (p.share) $("status").append(button(p.share, "primary", share));
  }
  async function share() {
    const r = await fetch("/app/api/share", { method: "POST", headers: auth });
    if (!r.ok) return;
    const { id } = await r.json();
    impact("light");
    postEvent("web_app_send_prepared_message", { id });
  }
  if (new URLSearchParams(location.search).get("v") === "profile") profile();
  else live();
})();
