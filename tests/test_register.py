"""One register per language: the bot speaks to a player the way it does everywhere else, in
every message of its catalog. Each language's catalog is searched for the pronouns and verb
forms of the register it does not use (a small list of words, not a grammar): Russian and
Ukrainian say ты/ти, never вы/ви; French tu, never vous; Indonesian aku, never saya; Spain's
Spanish tú and vosotros, and its computer is an ordenador; and so on.

A message said to several people at once ("{names}: ...") may use the plural "you", which in
ru, uk, fr and tr is the polite one's form too.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
from babel.messages.catalog import Message
from babel.messages.pofile import read_po

from tgcheat.i18n import LOCALES_DIR

#: For each language, the words of the register it does not use (matched as whole words,
#: ignoring case unless the entry says otherwise).
OTHER_REGISTER: dict[str, tuple[str, ...]] = {
    # ты: вы and its possessive, the polite imperatives of the bot's verbs.
    "ru": (
        "вы",
        "вас",
        "вам",
        "вами",
        "ваш",
        "ваша",
        "ваше",
        "ваши",
        "вашу",
        "вашего",
        "вашей",
        "ваших",
        "вашим",
        "отправьте",
        "нажмите",
        "выберите",
        "напишите",
        "добавьте",
        "попробуйте",
        "подождите",
        "сыграйте",
        "ходите",
        "ответьте",
    ),
    # ти: ви and its possessive, the polite imperatives.
    "uk": (
        "ви",
        "вас",
        "вам",
        "вами",
        "ваш",
        "ваша",
        "ваше",
        "ваші",
        "вашу",
        "вашого",
        "вашої",
        "ваших",
        "вашим",
        "надішліть",
        "натисніть",
        "виберіть",
        "оберіть",
        "напишіть",
        "додайте",
        "спробуйте",
        "зачекайте",
        "зіграйте",
        "відповідайте",
    ),
    # tu: vous, votre, vos, and the -ez imperatives of the bot's verbs.
    "fr": (
        "vous",
        "votre",
        "vos",
        "appuyez",
        "envoyez",
        "réessayez",
        "choisissez",
        "attendez",
        "touchez",
        "ajoutez",
        "jouez",
    ),
    # aku (with kamu): not saya, not Anda.
    "id": ("saya", "anda"),
    # Spain: tú and vosotros, not usted / ustedes; the computer is an ordenador.
    "es": ("usted", "ustedes", "computadora", "computadoras", "computador"),
    # du: not Sie and its forms (matched with their capital, as the polite forms are written).
    "de": ("Sie!", "Ihnen!", "Ihr!", "Ihre!", "Ihren!", "Ihrem!", "Ihrer!", "Ihres!"),
    # tu: not the capitalised Lei and its possessives, nor its imperatives.
    "it": ("Lei!", "Suo!", "Sua!", "Suoi!", "Sue!", "prema", "invii", "tocchi", "scelga"),
    # je / jij: not u and uw.
    "nl": ("u", "uw"),
    # você: not tu, teu, vós, o senhor.
    "pt_BR": ("tu", "teu", "tua", "teus", "tuas", "vós", "senhor", "senhora"),
    # ty: not Pan, Pani, Państwo.
    "pl": ("pan", "pani", "państwo", "panu", "panią"),
    # sen: not siz and its -(y)In imperatives.
    "tr": ("siz", "sizin", "size", "sizi", "dokunun", "gönderin", "seçin", "bekleyin"),
    # The plain second person: not the honorifics.
    "ar": ("حضرتك", "حضرتكم", "سيادتك"),
}


@cache
def messages(lang: str) -> tuple[Message, ...]:
    with (LOCALES_DIR / lang / "LC_MESSAGES" / "tgcheat.po").open("rb") as po_file:
        return tuple(message for message in read_po(po_file, locale=lang) if message.id)


def msgid(message: Message) -> str:
    return message.id[0] if isinstance(message.id, tuple) else message.id


def texts(message: Message) -> tuple[str, ...]:
    found = message.string
    return tuple(found) if isinstance(found, tuple) else (found or "",)


def to_several(message: Message) -> bool:
    """Said to several players at once: the plural "you" is right there."""
    return msgid(message).startswith("{names}: ")


@cache
def pattern(lang: str) -> re.Pattern[str]:
    """The other register's words as whole words: a word ending in "!" is matched with its
    case as written, the others in any case."""
    words = []
    for word in OTHER_REGISTER[lang]:
        if word.endswith("!"):
            words.append(rf"(?-i:{re.escape(word[:-1])})")
        else:
            words.append(re.escape(word))
    return re.compile(rf"(?<!\w)(?:{'|'.join(words)})(?!\w)", re.IGNORECASE)


def other_register(lang: str, text: str) -> list[str]:
    # Placeholders and tags are not words of the language.
    plain = re.sub(r"\{\w+\}|<[^>]*>", " ", text)
    return pattern(lang).findall(plain)


@pytest.mark.parametrize("lang", sorted(OTHER_REGISTER))
def test_one_register_throughout_the_catalog(lang: str) -> None:
    problems = [
        f"{msgid(message)!r}: {found} in {text!r}"
        for message in messages(lang)
        if not to_several(message)
        for text in texts(message)
        if (found := other_register(lang, text))
    ]
    assert not problems, f"{lang} switches register:\n" + "\n".join(problems)


#: What the check caught in the catalogs before they were made consistent (December 2026).
CAUGHT = {
    "ru": "📊 /stats: ваша статистика · /top: лучшие в группе · /forgetme удаляет вашу",
    "uk": "Надішліть /top у групі, щоб побачити її найкращих гравців.",
    "fr": "Le groupe vient de recevoir beaucoup de messages : réessayez dans une minute.",
    "id": "Saya tidak kenal «{word}». Contohnya: {example}.",
    "es": "Jugar contra la computadora",
    "de": "Tippen Sie auf den Button.",
    "it": "Lei ha già votato.",
    "nl": "Tik op uw kaarten.",
    "pt_BR": "Tu não estás em nenhuma partida.",
    "pl": "Czy Pan chce zagrać?",
    "tr": "Grupta az önce çok mesaj vardı: bir dakika sonra yeniden dokunun.",
    "ar": "اضغط حضرتك على الزر.",
}

#: The register each language does use, which the check must let pass.
KEPT = {
    "ru": "📊 /stats: твоя статистика · /top: лучшие в группе · /forgetme удаляет твою",
    "uk": "Надішли /top у групі, щоб побачити її найкращих гравців.",
    "fr": "Le groupe vient de recevoir beaucoup de messages : réessaie dans une minute.",
    "id": "Aku tidak kenal “{word}”. Contohnya: {example}.",
    "es": "Jugar contra el ordenador",
    "de": "Tippe auf den Button; sie sind dabei.",
    "it": "Hai già votato: lei e gli altri aspettano.",
    "nl": "Tik op je kaarten.",
    "pt_BR": "Você não está em nenhuma partida.",
    "pl": "Czy chcesz zagrać?",
    "tr": "Grupta az önce çok mesaj vardı: bir dakika sonra yeniden dokun.",
    "ar": "اضغط على الزر.",
}


@pytest.mark.parametrize("lang", sorted(OTHER_REGISTER))
def test_the_register_check_catches_the_other_register(lang: str) -> None:
    assert other_register(lang, CAUGHT[lang])
    assert other_register(lang, KEPT[lang]) == []


def test_a_message_to_several_players_may_say_you_in_the_plural() -> None:
    several = [m for m in messages("ru") if to_several(m)]
    assert several and any(other_register("ru", text) for m in several for text in texts(m))
