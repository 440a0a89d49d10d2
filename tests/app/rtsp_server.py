#!/usr/bin/python3
"""An RTSP server on loopback, as an IP camera is one: GStreamer's rtsp-server (Debian's
gir1.2-gst-rtsp-server-1.0) serving a live test pattern (SMPTE bars, 320x240, I420) as RTP/JPEG
(RFC 2435, what MJPEG IP cameras send; its payloader takes 4:2:0 JPEG only) at
rtsp://127.0.0.1:PORT/cam, until killed. Used by test_video_input.py's live part.

    rtsp_server.py PORT [FPS]

Prints "ready" on stdout once it listens."""
import sys

import gi
gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def main():
    port = sys.argv[1]
    fps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch("( videotestsrc is-live=true pattern=smpte ! video/x-raw,format=I420,width=320,"
                       "height=240,framerate=%d/1 ! jpegenc quality=80 ! rtpjpegpay name=pay0 "
                       "pt=26 )" % fps)
    factory.set_shared(True)
    server.get_mount_points().add_factory("/cam", factory)
    if server.attach(None) == 0:
        sys.exit("rtsp_server: cannot listen on port %s" % port)
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
