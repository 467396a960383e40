/* gw_help.c - the text of --help and rankcast(1) (gw_help.h). */
#include "gw_help.h"

#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char gw_help_name[] = "rankcast - real-time leaderboard push gateway (WebSocket and HTTP over Redis)";

const char *const gw_help_synopsis[] = {
    "rankcast [--config FILE] [--listen HOST:PORT] [--redis HOST:PORT[,HOST:PORT...]|redis://HOST:PORT] "
    "[--state DIR] [--workers N]",
    "rankcast --check-config FILE",
    "rankcast token --scope read|write|admin[,...] [--board PATTERN[,...]] --ttl DURATION [--sub NAME] "
    "[--config FILE]",
    "rankcast export BOARD [--period P] [--format csv|jsonl] [--config FILE] [--redis HOST:PORT[,...]] [--state DIR]",
    "rankcast import BOARD FILE [--format csv|jsonl] [--quiet] [--config FILE] [--redis HOST:PORT[,...]] "
    "[--state DIR]",
    "rankcast teams rebuild BOARD [--period P] [--config FILE] [--redis HOST:PORT[,...]]",
    "rankcast --version | --help",
    NULL,
};

static const struct gw_help_entry description[] = {
    {NULL, "rankcast keeps leaderboards in Redis and pushes their changes to WebSocket clients: writes go through "
           "one Lua script, and every subscribed view gets one coalesced delta per tick. It also serves a REST API, "
           "/healthz, /metrics and the dashboard's pages. Everything it does is described by its configuration "
           "file, whose comments document every key."},
};

static const struct gw_help_entry options[] = {
    {"--config FILE", "The configuration file. Default conf/rankcast.conf (relative to the working directory: a "
                      "clone's); the packaged service uses /etc/rankcast/rankcast.conf."},
    {"--listen HOST:PORT", "Where WebSocket and HTTP are served ([server] listen). Also RANKCAST_LISTEN."},
    {"--redis ADDRESS", "HOST:PORT, redis://HOST:PORT, or a comma-separated list of Redis Cluster seed nodes "
                        "([redis] address). Also RANKCAST_REDIS."},
    {"--state DIR", "The directory of local state: the archive of finished periods ([server] state_dir). Also "
                    "RANKCAST_STATE."},
    {"--workers N", "Run N processes on one port, a supervisor restarting them ([server] workers). Also "
                    "RANKCAST_WORKERS."},
    {"--check-config FILE", "Validate FILE (and the key and password files it names), print \"FILE: ok, N boards\" "
                            "and exit 0, or print the reason and exit 1."},
    {"--version", "Print the version of rankcast and of the libwebsockets, hiredis and libuv it runs with."},
    {"--help", "Print this text."},
    {NULL, "Flags beat the environment, which beats the file."},
};

static const struct gw_help_entry commands[] = {
    {"token", "Print a JSON Web Token signed with RANKCAST_JWT_SECRET (else [auth] jwt_secret of --config): "
              "--scope read, write or admin (comma-separated), --board a board or pattern (repeatable), --ttl its "
              "lifetime (30d, 12h, 15m), --sub the subject claim."},
    {"export", "Stream BOARD to stdout as CSV or JSON Lines (--format), its live rows or, with --period P, an "
               "archived period."},
    {"import", "Load FILE (CSV, or JSON Lines when it ends in .jsonl or --format says so) into BOARD through the "
               "write script; running it again changes nothing. --quiet prints no progress."},
    {"teams", "teams rebuild BOARD [--period P]: recompute the team board of BOARD (teams = T) from its "
              "members' scores and memberships, after changes made outside rankcast (a redis-cli ZADD on the "
              "source cannot update team sums; docs/teams.md)."},
};

static const struct gw_help_entry environment[] = {
    {"RANKCAST_LISTEN, RANKCAST_REDIS, RANKCAST_STATE, RANKCAST_WORKERS", "As the flags of the same names."},
    {"RANKCAST_ADMIN_KEY", "When set (16..128 characters), one more key with every scope for every board. Never "
                           "printed."},
    {"RANKCAST_JWT_SECRET", "The HS256 secret of tokens (and of rankcast token)."},
    {"RANKCAST_REDIS_PASSWORD", "The Redis password (AUTH); else [redis] password_env or password_file; [redis] "
                                "username names an ACL user."},
    {"JOURNAL_STREAM", "Set by systemd when stderr goes to the journal: log lines then carry no timestamp of "
                       "their own (the journal adds one) and a syslog priority prefix."},
};

static const struct gw_help_entry files[] = {
    {"/etc/rankcast/rankcast.conf", "The packaged service's configuration (a Debian conffile)."},
    {"/usr/share/rankcast/web", "The dashboard's pages. A relative [server] web_root is looked up under the "
                                "installation's share/rankcast/ (next to the binary's bin/), and else in the "
                                "working directory, where a clone's build finds web/."},
    {"/var/lib/rankcast", "The service's state directory (systemd StateDirectory=rankcast)."},
    {"rankcast.service", "The systemd unit: runs rankcast as the user rankcast. The gateway has no reload: "
                         "restart it to read a changed configuration."},
};

static const struct gw_help_entry exit_status[] = {
    {"0", "Stopped cleanly (SIGTERM or SIGINT), or the command succeeded."},
    {"1", "Could not start, or the command failed (the reason is printed)."},
    {"2", "A bad command line (the usage is printed)."},
};

const struct gw_help_section gw_help_sections[] = {
    {"DESCRIPTION", description, N(description)}, {"OPTIONS", options, N(options)},
    {"COMMANDS", commands, N(commands)},          {"ENVIRONMENT", environment, N(environment)},
    {"FILES", files, N(files)},                   {"EXIT STATUS", exit_status, N(exit_status)},
};
const size_t gw_help_nsections = N(gw_help_sections);

/* Prints text from column indent (later lines from indent + hang),
 * breaking at spaces before column 80. */
static void wrap(FILE *f, const char *text, int indent, int hang)
{
    while (*text) {
        const int width = 80 - indent;
        int n = (int)strlen(text);
        if (n > width) {
            n = width;
            while (n > 0 && text[n] != ' ')
                n--;
            if (n == 0) /* one word longer than the line */
                n = (int)strcspn(text, " ");
        }
        fprintf(f, "%*s%.*s\n", indent, "", n, text);
        text += n;
        while (*text == ' ')
            text++;
        indent += hang;
        hang = 0;
    }
}

void gw_help_print(FILE *f)
{
    fprintf(f, "%s\n\nUSAGE\n", gw_help_name);
    for (const char *const *s = gw_help_synopsis; *s; s++)
        wrap(f, *s, 2, 9); /* under the flags, past "rankcast " */
    for (size_t i = 0; i < gw_help_nsections; i++) {
        const struct gw_help_section *sec = &gw_help_sections[i];
        fprintf(f, "\n%s\n", sec->title);
        for (size_t j = 0; j < sec->nentries; j++) {
            if (sec->entries[j].term)
                fprintf(f, "  %s\n", sec->entries[j].term);
            wrap(f, sec->entries[j].text, sec->entries[j].term ? 6 : 2, 0);
        }
    }
}
