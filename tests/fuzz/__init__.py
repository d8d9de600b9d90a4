"""Property-based fuzzing of the two public endpoints: no input answers 500 or stops the server.

Contract under test: every error of ``POST /api/v1/webhooks/sendbird`` and ``POST
/api/v1/agent/tool-message`` is a 4xx whose JSON body is exactly
``{"error": {"code": "<snake_case>", "message": "<text>"}}``; a bad request is never a 500; valid
requests get their documented statuses (docs/http.md, "HTTP endpoints" and "Tool-message statuses").

Layout
------
* ``strategies``: JSON built as text, header values, chunked bodies (shared by both endpoints).
* ``tool_headers``, ``tool_bodies``: tool-message requests (Authorization/Content-Type, and bodies
  whose call ids are filled in when sent); ``webhook_inputs``: Sendbird events, bad signatures.
* ``oracle``: the contract (``check_contract``, the error codes per status) and what each request
  may get back (``tool_expectation``, ``webhook_expectation``).
* ``harness``: the server under fuzzing (``fuzz_server``, ``Fuzz``), ``run_property``;
  ``timeouts``: the time bound of each test.
* ``test_tool_message``, ``test_webhook``: the fuzzing of each endpoint; ``test_schemathesis``:
  schemathesis on the OpenAPI schema, and the methods neither endpoint takes.

Design
------
* Each test starts the real app (API + embedded worker) over HTTP on 127.0.0.1 with the real Redis,
  through the ``start_server`` fixture of ``tests/conftest.py``. The server runs in the test's event
  loop, as in every other API test.
* Hypothesis runs a *synchronous* ``@given`` function in a worker thread (``asyncio.to_thread``) that
  talks to the server with a blocking ``httpx.Client``. The test coroutine only awaits that thread, so
  the event loop stays free to serve the requests: no deadlock, no second event loop, no server
  thread to start or stop. When the fuzzing thread needs the harness (opening a new pending call
  after one was answered), it hands a coroutine to the loop with ``asyncio.run_coroutine_threadsafe``.
* Every response is checked against the contract (``check_contract``), and each strategy carries its
  own oracle: which statuses (and error codes) are possible for what was sent — a bad token is always
  401, a body over the limit always 413, a well-formed answer never 400, another user's token never
  gets past 403, a correctly signed well-formed Sendbird message is 200 ``queued``/``duplicate`` (or
  ``ignored`` exactly when the assistant does not answer that event), a user message without a
  channel, a sender or a positive integer message id is 400, and so on.
* Inputs are built as bytes/JSON text rather than Python values, so that everything a client can
  send is reachable: invalid UTF-8, UTF-16/32 bodies, lone surrogates (``"\\ud800"`` escapes),
  NaN/Infinity, integers past Python's 4300-digit limit, duplicate keys, nesting thousands deep,
  chunked bodies around the size limits, odd Authorization and signature headers (as raw bytes).
  Header values are limited to what HTTP/1.1 allows in a field value (tab, space, VCHAR, obs-text;
  ``strategies.FIELD_VALUE``): other bytes are refused by uvicorn before the app runs, with its own
  plain-text 400, which is outside the app's contract.
* After each run: ``/healthz`` still answers, a normal webhook in a fresh channel is still answered
  by the worker (it survived what it was fed), and nothing at all was logged at ERROR level (no
  unhandled request error, no failed turn).
* Every test has a time bound, ``@pytest.mark.timeout(N)``: a few times what it takes (for the
  properties, times ``TRULOOP_FUZZ_SCALE``). pytest-timeout (its "signal" method) raises its
  Timeout in the main thread, where the event loop runs, with the stacks of all threads. When the
  loop is stuck in a task of the server (an endless loop in a request or a turn), that Timeout ends
  the task, not the test, and the server may run the same code again; so
  ``timeouts.timeout_until_it_lands`` (entered by ``fuzz_server``) also cancels the test's task,
  which stops its server and fails with ``TimedOut`` and the place where the loop was stuck, stops
  the fuzzing thread, and raises the Timeout again every second while the loop stays stuck. The
  run then goes on with the next test.
* Reproducible: ``derandomize=True``, no example database, ``deadline=None``. ``TRULOOP_FUZZ_SCALE=N``
  multiplies every ``max_examples``; ``TRULOOP_FUZZ_SEED=S`` switches to random generation with that
  seed (for longer local hunts). Each test prints how many examples and requests it ran (``-s``).
* schemathesis (``test_schemathesis_openapi``): the live ``/openapi.json`` declares no request body,
  header or error response for the two endpoints (they read the raw body themselves, to check the
  HMAC over the exact bytes and the size before anything else), so schemathesis alone can only send
  empty POSTs. The test therefore runs it twice: on the live schema as served (``from_url``, the
  empty POST, positive mode only as there is nothing to negate), and on that schema with the docs'
  contract filled in, loaded with ``from_dict``: request bodies from the protocol's pydantic models
  (``jsonrpc`` pinned to "2.0", real call ids, exactly one of result/error), the Authorization
  header, the success bodies and the 4xx error shape — in positive and negative generation modes,
  with schemathesis' ``not_a_server_error``, ``status_code_conformance`` and
  ``response_schema_conformance`` checks. Its cases are sent through our client (from
  ``case.as_transport_kwargs``) so that webhook bodies can be signed over the exact bytes sent, and
  most carry a valid token or signature so that they get past authentication.
"""
