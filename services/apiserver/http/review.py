"""POST of a who-am-I or can-I review: answered at once, never written (`services.apiserver.reviews`).

The body is checked as any create's is (apiVersion and kind against the URL,
field validation against the kind's model), then answered from the request's
user and the authorizer the committer's admission runs: 201 Created with the
review and its status, as kube-apiserver answers.
"""

from __future__ import annotations

from datetime import UTC, datetime

from aiohttp import web

from services.api.admission.authorization import Authorizer
from services.apiserver import reviews
from services.apiserver.http.create import prepare_object
from services.apiserver.http.scope import Scope


async def review(scope: Scope, *, authorizer: Authorizer, uid: str) -> web.Response:
    raw, obj = await scope.body_object()
    obj = prepare_object(scope, raw, obj, directive=scope.field_validation("CreateOptions"))
    rt = scope.route.rt
    if rt is reviews.SELF_SUBJECT_REVIEWS:
        answer = reviews.self_subject_review(scope.user, uid=uid, now=datetime.now(UTC))
    elif rt is reviews.SELF_SUBJECT_ACCESS_REVIEWS:
        answer = reviews.self_subject_access_review(obj, scope.user, authorizer=authorizer)
    else:
        answer = reviews.self_subject_rules_review(obj, scope.user, authorizer=authorizer)
    return scope.respond(answer, 201)
