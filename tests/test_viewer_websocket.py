"""The viewer's websocket opens only for its own page: the token of viewer.url, and the page's Origin.

A raw websocket client (the ``websockets`` package) speaks viser's protocol (its subprotocol ``viser-vX.Y.Z``), so
that a refusal comes from robodyn's check and not from viser's version check: a refused connection is closed
with code 1008 before any message of the scene is sent, an accepted one receives the scene.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import robodyn as rd

viser = pytest.importorskip("viser")
sync_client = pytest.importorskip("websockets.sync.client")


@pytest.fixture(scope="module")
def viewer():
    v = rd.view(rd.load("planar2r"))
    yield v
    v.close()


def _addresses(v):
    socket_url = parse_qs(urlsplit(v.url).query)["websocket"][0]
    port = urlsplit(v.url).port
    return socket_url, port


def _attempt(url: str, origin: str | None):
    """(1, None) when the first message of the scene arrives; (0, close code) when the server closes first."""
    with sync_client.connect(url, origin=origin, subprotocols=[f"viser-v{viser.__version__}"],
                             open_timeout=10) as c:
        try:
            c.recv(timeout=10)
        except TimeoutError:
            return 0, None
        except Exception:  # the server closed the connection
            return 0, c.close_code
        return 1, None


def test_the_url_carries_an_unguessable_token(viewer):
    socket_url, port = _addresses(viewer)
    assert viewer.url.startswith(f"http://127.0.0.1:{port}/?websocket=ws://127.0.0.1:{port}/?token=")
    token = parse_qs(urlsplit(socket_url).query)["token"][0]
    assert len(token) >= 40  # 256 random bits, URL-safe base64
    other = rd.view(rd.load("planar2r"))
    try:
        assert parse_qs(urlsplit(parse_qs(urlsplit(other.url).query)["websocket"][0]).query)["token"][0] != token
    finally:
        other.close()


def test_the_page_itself_receives_the_scene(viewer):
    socket_url, port = _addresses(viewer)
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}", None):
        assert _attempt(socket_url, origin) == (1, None), origin


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "https://127.0.0.1:{port}",
                                    "http://127.0.0.1:1", "http://127.0.0.1.evil.example:{port}"])
def test_another_origin_is_closed_before_any_message(viewer, origin):
    socket_url, port = _addresses(viewer)
    assert _attempt(socket_url, origin.format(port=port)) == (0, 1008)


@pytest.mark.parametrize("suffix", ["", "?token=", "?token=abc", "?token={token}x", "?token={token}&token={token}",
                                    "{token}", "?tok={token}"])
def test_a_missing_or_wrong_token_is_closed_before_any_message(viewer, suffix):
    socket_url, port = _addresses(viewer)
    token = parse_qs(urlsplit(socket_url).query)["token"][0]
    url = f"ws://127.0.0.1:{port}/" + suffix.format(token=token)
    assert _attempt(url, f"http://127.0.0.1:{port}") == (0, 1008)


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e, exclude_characters="#"), max_size=60),
       origin=st.one_of(st.none(), st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=40)))
def test_fuzzed_handshakes_never_see_the_scene(viewer, path, origin):
    """Random request targets and Origin headers: without the token, every connection is closed unanswered."""
    _, port = _addresses(viewer)
    try:
        result = _attempt(f"ws://127.0.0.1:{port}/{path}", origin)
    except Exception:  # a target or header the client library or the server refuses outright
        return
    assert result == (0, 1008)


def test_the_check_itself(viewer):
    socket_url, port = _addresses(viewer)
    path = "/?" + urlsplit(socket_url).query
    page = f"http://127.0.0.1:{port}"
    assert viewer.allowed(page, path) and viewer.allowed(None, path) and viewer.allowed(page + "/", path)
    assert not viewer.allowed("http://evil.example", path)
    assert not viewer.allowed(page, "/") and not viewer.allowed(page, "/?token=" + "A" * 43)


def test_another_page_in_a_real_browser_gets_nothing(tmp_path, viewer):
    """A page served from another local port opens the viewer's websocket, token included (the worst case: the
    URL leaked): Chromium sends that page's Origin, and the viewer closes the socket before any message."""
    import functools
    import http.server
    import threading
    import time

    from tests.test_viewer import _chrome

    socket_url, _ = _addresses(viewer)
    (tmp_path / "evil.html").write_text(
        "<html><body><script>let n = 0;"
        f"const ws = new WebSocket({socket_url!r}, ['viser-v{viser.__version__}']);"
        "ws.onmessage = () => { n += 1; };"
        "ws.onclose = (e) => { document.title = 'closed ' + e.code + ' after ' + n; };"
        "</script></body></html>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    browser = _chrome()
    try:
        browser.get(f"http://127.0.0.1:{server.server_address[1]}/evil.html")
        deadline = time.monotonic() + 30
        while not browser.title.startswith("closed") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert browser.title == "closed 1008 after 0"
    finally:
        browser.quit()
        server.shutdown()
