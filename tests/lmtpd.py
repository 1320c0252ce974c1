#!/usr/bin/env python3
# lmtpd.py - a small LMTP (or SMTP) server for the shell tests (not a
# test itself)
#
#   python3 tests/lmtpd.py [--smtp] DIR
#
# Listens on 127.0.0.1 (a free port, written to DIR/port once it
# listens) and serves connections (each in a thread) until killed.  Each
# post it accepts is written to DIR/msg.N exactly as received after
# un-stuffing (CRLF line ends), its envelope to DIR/env.N ("MAIL FROM:<...>
# PARAMS" and "RCPT TO:<...>" lines).  DIR/script, read at each new
# connection, changes the replies: lines "STAGE REPLY" with STAGE one of
# greeting, lhlo, mail, rcpt, data, end (the reply after the data),
# quit; REPLY "HANG" stops answering ("end TAKE-HANG" stores the post,
# then stops answering: a server that took it and died or stalled).  DIR/quit appears when a client
# says QUIT.  With --smtp it is an SMTP sink instead (EHLO or HELO, any
# number of RCPT, one reply after the data, several posts per
# connection): the list manager's outgoing mail in tests/mailman3_e2e.sh.
# Standard library only.
import os
import socket
import sys
import threading
import time

DEFAULT = {
    "greeting": "220 lmtpd.test LMTP",
    "lhlo": "250-lmtpd.test\r\n250-8BITMIME\r\n250 PIPELINING",
    "mail": "250 2.1.0 ok",
    "rcpt": "250 2.1.5 ok",
    "data": "354 go ahead",
    "end": "250 2.0.0 delivered",
    "quit": "221 bye",
}


def script(d):
    r = dict(DEFAULT)
    try:
        with open(os.path.join(d, "script")) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 1)
                if len(parts) == 2 and parts[0] in r:
                    r[parts[0]] = parts[1]
    except FileNotFoundError:
        pass
    return r


LOCK = threading.Lock()
COUNT = [0]


def take_number():
    with LOCK:
        COUNT[0] += 1
        return COUNT[0]


def serve(conn, d):
    r = script(d)
    f = conn.makefile("rb")

    def say(stage):
        if r[stage] in ("HANG", "TAKE-HANG"):
            time.sleep(3600)
        conn.sendall(r[stage].encode() + b"\r\n")
        return r[stage][0]

    say("greeting")
    env = []
    while True:
        line = f.readline()
        if not line:
            return
        cmd = line.rstrip(b"\r\n")
        verb = cmd[:4].upper()
        if verb == b"LHLO" or (SMTP and verb in (b"EHLO", b"HELO")):
            say("lhlo")
        elif verb == b"MAIL":
            env = [cmd]
            say("mail")
        elif verb == b"RCPT":
            env.append(cmd)
            say("rcpt")
        elif verb == b"DATA":
            if say("data") != "3":
                continue
            body = bytearray()
            while True:
                line = f.readline()
                if not line:
                    return
                if line == b".\r\n":
                    break
                if line.startswith(b"."):
                    line = line[1:]
                body += line
            if r["end"].startswith("2") or r["end"] == "TAKE-HANG":
                n = take_number()
                with open(os.path.join(d, "msg.%d.tmp" % n), "wb") as o:
                    o.write(body)
                with open(os.path.join(d, "env.%d" % n), "wb") as o:
                    o.write(b"\n".join(env) + b"\n")
                os.rename(os.path.join(d, "msg.%d.tmp" % n),
                          os.path.join(d, "msg.%d" % n))
            say("end")
        elif verb == b"QUIT":
            # (DIR/quit says a client reached QUIT)
            open(os.path.join(d, "quit"), "w").close()
            say("quit")
            return
        elif verb in (b"RSET", b"NOOP"):
            env = []
            conn.sendall(b"250 ok\r\n")
        else:
            conn.sendall(b"500 what?\r\n")


SMTP = False


def main():
    global SMTP
    args = sys.argv[1:]
    if args and args[0] == "--smtp":
        SMTP = True
        args = args[1:]
    d = args[0]
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    with open(os.path.join(d, "port.tmp"), "w") as o:
        o.write("%d\n" % s.getsockname()[1])
    os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
    while True:
        conn, _ = s.accept()
        threading.Thread(target=handle, args=(conn, d), daemon=True).start()


def handle(conn, d):
    try:
        serve(conn, d)
    except OSError:
        pass
    finally:
        conn.close()


if __name__ == "__main__":
    main()
