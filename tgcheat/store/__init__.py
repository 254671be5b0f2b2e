"""Where the games are kept: Redis, through tgcheat.store.games.GameStore.

One module per concern: ``sessions`` (a group's session and its compare-and-set),
``messages`` (the ids of the messages that show it), ``settings`` (groups' and users'
choices), ``clock`` (deadlines), ``budget`` (each group's message budget, and what a flood
wait held back), ``deliveries`` (failed deliveries of an update); ``scripts`` holds the
Lua scripts with the builders of their keys and arguments, ``keys`` the names of keys and
fields, ``hints`` this process's hint of each chat, ``codec`` the session's document,
``direct`` the hot path to Redis and ``timeout`` every operation's deadline.
"""
