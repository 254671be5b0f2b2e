// The Mini App: the player's hand as cards, the table, live. Plain JavaScript, no framework and
// no build step: the server sends every text in the player's language, and this script draws
// cards (SVG), keeps the selection and talks to /app/api. Telegram's launch parameters come in
// the URL's fragment (tgWebAppData: the signed initData; tgWebAppThemeParams: the colours).
"use strict";
(function () {
  const launch = new URLSearchParams(location.hash.slice(1));
  const initData = launch.get("tgWebAppData") || "";
  const initFields = new URLSearchParams(initData);
  // None named (the menu button): the server finds the person's game and names it.
  let place = new URLSearchParams(location.search).get("p") ||
    launch.get("tgWebAppStartParam") || initFields.get("start_param") || "";
  const auth = { Authorization: "tma " + initData };
  const $ = (id) => document.getElementById(id);
  let state = null;
  let picked = new Set(); // card ids
  let busy = false;
  let revealTimer = 0;

  // --- Telegram: events to the app (theme, haptics, ready) ---------------------------------
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
  const haptic = (kind, value) =>
    postEvent("web_app_trigger_haptic_feedback", { type: kind, [kind === "impact" ? "impact_style" : "notification_type"]: value });
  function applyTheme(raw) {
    let theme = {};
    try { theme = JSON.parse(raw || "{}"); } catch (e) { return; }
    for (const [key, value] of Object.entries(theme))
      document.documentElement.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), value);
  }
  applyTheme(launch.get("tgWebAppThemeParams"));
  window.Telegram = window.Telegram || {};
  window.Telegram.WebView = window.Telegram.WebView || {
    receiveEvent(type, data) { if (type === "theme_changed" && data) applyTheme(JSON.stringify(data.theme_params)); },
  };
  postEvent("web_app_ready");
  postEvent("web_app_expand");

  // --- cards --------------------------------------------------------------------------------
  const SUITS = { c: ["♣", "#222"], s: ["♠", "#222"], h: ["♥", "#c62828"], d: ["♦", "#c62828"] };
  function cardSvg(card) {
    const [suit, colour] = SUITS[card.suit] || ["★", "#6a1b9a"];
    const label = card.label.replace(/[<&>]/g, "");
    return `<svg viewBox="0 0 54 78" aria-hidden="true">` +
      `<rect class="face" x="1.5" y="1.5" width="51" height="75" rx="6" fill="#fff" stroke="#bbb"/>` +
      `<text x="6" y="18" font-size="15" font-weight="700" fill="${colour}">${label}</text>` +
      `<text x="27" y="54" font-size="${card.suit ? 28 : 30}" text-anchor="middle" fill="${colour}">${suit}</text>` +
      `</svg>`;
  }

  // --- drawing ------------------------------------------------------------------------------
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function button(text, cls, onClick) {
    const b = el("button", "act " + (cls || ""), text);
    b.addEventListener("click", onClick);
    return b;
  }

  function render() {
    const s = state;
    document.documentElement.dir = s.rtl ? "rtl" : "ltr";
    if (s.refused && !s.seats) { showToast(s.refused); return; }
    const lines = s.table || [];
    const blank = lines.indexOf("");
    const finished = s.phase === "finished";
    $("head").textContent = finished ? "" : lines[0] || "";
    const seats = $("seats");
    seats.replaceChildren();
    s.seats.forEach((seat, i) => {
      const li = el("li");
      li.dataset.seat = i;
      if (!finished && i === s.turn && s.phase === "playing") li.classList.add("turn");
      if (i === s.me) li.classList.add("me");
      if (seat.left) li.classList.add("left");
      li.append(el("span", "name", `${i + 1}. ${seat.name}`), el("span", "count", `🂠 ${seat.cards}`));
      seats.append(li);
    });
    $("status").textContent = finished ? lines.join("\n") : (blank >= 0 ? lines.slice(blank + 1).join("\n") : "");
    renderAnswers();
    renderHand();
    tick();
  }

  function renderAnswers() {
    const box = $("answers");
    box.replaceChildren();
    const s = state;
    const row = el("div", "row");
    for (const a of s.answers || []) {
      const cls = a.op === "cheat" ? "danger" : a.op === "believe" || a.op === "no" ? "alt" : "";
      row.append(button(a.label, cls, () => act({ op: a.op, claim: a.claim, plays: s.plays })));
    }
    if (row.childElementCount) box.append(row);
    if (s.pass) box.append(button(s.pass, "alt", () => act({ op: "pass", plays: s.plays })));
  }

  function renderHand() {
    const s = state;
    $("hand-title").textContent = s.handTitle || "";
    const cards = $("cards");
    cards.replaceChildren();
    const ids = new Set(s.hand.map((c) => c.id));
    picked = new Set([...picked].filter((id) => ids.has(id)));
    let lastRank = null;
    for (const card of s.hand) {
      const b = el("button", "card");
      b.type = "button";
      b.dataset.rank = card.rank;
      b.dataset.id = card.id;
      b.setAttribute("aria-label", card.label);
      if (lastRank !== null && card.rank !== lastRank) b.classList.add("gap");
      lastRank = card.rank;
      if (picked.has(card.id)) b.classList.add("sel");
      b.innerHTML = cardSvg(card);
      b.addEventListener("click", () => pick(card.id));
      cards.append(b);
    }
    const play = s.play;
    const claims = $("claims");
    const controls = $("controls");
    claims.replaceChildren();
    controls.replaceChildren();
    if (!play) { $("prompt").textContent = ""; return; }
    const count = picked.size;
    $("prompt").textContent = count ? play.claimHint : play.prompt + "\n" + play.tap;
    if (!count) return;
    if (s.required) {
      const label = play.claims[s.required][count - 1];
      controls.append(button(label, "", () => playCards(s.required)));
    } else {
      for (const [rank, label] of Object.entries(play.rankLabels)) {
        const b = button(label, "", () => playCards(rank));
        b.title = play.claims[rank][count - 1];
        b.dataset.rank = rank;
        claims.append(b);
      }
    }
    controls.append(button(play.clear, "alt", () => { picked.clear(); haptic("impact", "light"); renderHand(); }));
  }

  function pick(id) {
    if (!state.play || busy) return;
    if (picked.has(id)) picked.delete(id);
    else if (picked.size < state.play.limit) picked.add(id);
    else { haptic("notification", "warning"); return; }
    postEvent("web_app_trigger_haptic_feedback", { type: "selection_change" });
    renderHand();
  }

  function playCards(rank) {
    const counts = {};
    for (const card of state.hand) if (picked.has(card.id)) counts[card.rank] = (counts[card.rank] || 0) + 1;
    act({ op: "play", plays: state.plays, cards: counts, rank });
  }

  function tick() {
    const s = state;
    const left = s && s.deadline ? Math.ceil((s.deadline - (s.now + (Date.now() - s.received))) / 1000) : 0;
    $("timer").textContent = left > 0 && s.phase !== "finished" ? `⏱ ${left}` : "";
  }
  setInterval(() => state && tick(), 1000);

  function showReveal(lines) {
    const box = $("reveal");
    box.textContent = lines.join("\n\n");
    box.hidden = false;
    haptic("notification", "warning");
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
    state = next;
    if (next.place) place = next.place;
    if (next.reveals && next.reveals.length) showReveal(next.reveals);
    render();
  }

  // --- the API ------------------------------------------------------------------------------
  function requestId() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  async function act(action) {
    if (busy) return;
    busy = true;
    haptic("impact", "medium");
    try {
      const r = await fetch("/app/api/act", {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify({ ...action, place, game: state.game, request: requestId() }),
      });
      if (r.status === 401) return locked();
      const body = await r.json();
      if (body.refused) { haptic("notification", "error"); showToast(body.refused); }
      else { picked.clear(); haptic("notification", "success"); }
      if (body.seats) accept(body);
    } catch (e) { /* the live stream shows the state when it is back */ } finally { busy = false; }
  }
  function locked() {
    document.body.dataset.locked = "1";
    $("head").textContent = "🔒";
  }

  // Live updates: server-sent events read with fetch (EventSource cannot send the initData
  // header); a lost connection is opened again and shows the current state.
  async function live() {
    for (;;) {
      try {
        const r = await fetch("/app/api/events?place=" + encodeURIComponent(place), { headers: auth });
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
    haptic("impact", "light");
    postEvent("web_app_send_prepared_message", { id });
  }
  if (new URLSearchParams(location.search).get("v") === "profile") profile();
  else live();
})();
