"""The apiserver's REST layer: Kubernetes' HTTP dialect in front of a `Backend`.

kubectl and the official Python client talk to this package unchanged. It is
split by verb, as kine splits its server: `get`, `list`, `watch`, `create`,
`update`, `patch`, `delete`; `routing` parses resource URLs, `negotiation`
picks formats, `errors` writes Status bodies, `auth` authenticates, `scope`
holds what every handler shares and `server` assembles the aiohttp
application. Handlers never touch the log: reads and writes go through
`services.apiserver.backend.Backend`.
"""

from services.apiserver.http.server import build_app, serve, start

__all__ = ["build_app", "serve", "start"]
