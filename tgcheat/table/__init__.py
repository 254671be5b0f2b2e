"""A group's session as pure values and pure transitions: lobby, game, match, the clock's
decisions and who must be shown what. No telegram, redis, asyncio, time or random here."""
