"""A mosquitto broker on a loopback port for the tests that need one (test_mqtt.py,
test_model_set.py,
test_cameras_events.py).

    sys.path.insert(0, <the tests/app folder>)
    from mqtt_broker import Broker
"""
import os
import pwd
import socket
import subprocess

from checks import check, wait_for


class Broker:
    """mosquitto on 127.0.0.1:port, persistence in tmp (a subscriber's session survives a
    restart, as on a real broker with persistence on); extra: more configuration lines."""

    def __init__(self, tmp, port, name="mosquitto", extra=""):
        self.conf = os.path.join(tmp, name + ".conf")
        db = os.path.join(tmp, name + "-db")
        os.makedirs(db, exist_ok=True)
        # user: started as root, mosquitto would switch to the user "mosquitto", which cannot
        # write into this private temporary directory; as anyone else it stays who it is.
        with open(self.conf, "w") as f:
            f.write("listener %d 127.0.0.1\npersistence true\npersistence_location %s/\n"
                    "user %s\n%s" % (port, db, pwd.getpwuid(os.getuid()).pw_name,
                                      extra or "allow_anonymous true\n"))
        self.port, self.log, self.p = port, os.path.join(tmp, name + ".log"), None

    def start(self):
        self.p = subprocess.Popen(["mosquitto", "-c", self.conf], stdout=open(self.log, "a"),
                                  stderr=subprocess.STDOUT)
        ok = wait_for(lambda: self.accepts(), 10)
        check(ok, "broker: mosquitto listens on port %d" % self.port)

    def accepts(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), 0.2).close()
            return True
        except OSError:
            return False

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.terminate()  # SIGTERM: mosquitto saves its database and exits
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
