"""The pure game engine: no Telegram, Redis, asyncio, clock or randomness of its own."""
