"""The scheduler: kube-scheduler 1.31's queue, framework, plugins and DRA, over the log.

Everything here up to Reserve is pure (no I/O, no awaits); the extension points
that write (PostFilter, Unreserve, PreBind, Bind, PostBind) are coroutines over
an injected API client. ``scheduler.SchedulerCore`` ties the parts together for
the asyncio service.
"""
