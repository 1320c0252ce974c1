"""rawhttp.py - the web tests' raw HTTP: bytes sent as given on one
connection to listgate web on 127.0.0.1, and everything it answers
until it closes the connection.  Imported by the tests' inline Python
(sys.path gets $top_srcdir/tests)."""
import socket


def exchange(port, data, timeout=10, sock=None):
    """Send data on sock (or a new connection to 127.0.0.1:port) and read
    until the server closes it.  Returns (the answer's bytes, closed):
    closed is False when the connection stayed open past timeout or
    broke."""
    s = sock or socket.create_connection(("127.0.0.1", int(port)),
                                         timeout=timeout)
    out = b""
    try:
        s.sendall(data)
        while True:
            b = s.recv(65536)
            if not b:
                return out, True
            out += b
    except OSError:
        return out, False
