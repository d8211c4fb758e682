-- The storing peer (bench/systems/xmpp.ts): Prosody 0.12 from Debian, configured as an operator
-- who keeps group-chat history would: multi-user chat with a server-side archive (mod_muc_mam,
-- XEP-0313) of every room, in SQL storage on SQLite (Prosody's defaults for it: one transaction per
-- archived message, SQLite's rollback journal with synchronous=FULL), persistent rooms (a room's
-- archive outlives its occupants). Loopback only, no TLS, anonymous sign-in, as the IRC peers run.
-- Rooms of 1,000: only moderators' presence is broadcast (as operators of large rooms set it), so a
-- join or a leave is not announced to everyone in the room; messages still go to every occupant.
pidfile = "@DIR@/prosody.pid"
data_path = "@DIR@"
run_as_root = true
interfaces = { "127.0.0.1" }
c2s_ports = { @PORT@ }
s2s_ports = {}
component_ports = {}
http_ports = {}
https_ports = {}
c2s_require_encryption = false
s2s_require_encryption = false
authentication = "anonymous"
allow_registration = false
modules_enabled = { "disco"; "saslauth"; "ping" }
modules_disabled = { "s2s"; "offline"; "tls" }
storage = "sql"
sql = { driver = "SQLite3"; database = "prosody.sqlite" }
log = { error = "@DIR@/prosody.log" }

VirtualHost "bench.local"

Component "conference.bench.local" "muc"
  modules_enabled = { "muc_mam" }
  muc_log_all_rooms = true
  muc_room_default_persistent = true
  -- Rooms open as soon as they are made (no configuration form first), without in-memory history.
  muc_room_locking = false
  muc_room_default_history_length = 0
  muc_room_default_presence_broadcast = { moderator = true }
