"""The aiohttp edge: the server (HTTP and the Responses WebSocket) that drives the turn engine."""
