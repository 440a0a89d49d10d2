/* camclass fuzz target — what --mqtt, --device-id and --mqtt-auth hand to app/output/mqtt.c
 * before anything connects: cc_mqtt_parse_url, cc_mqtt_device_id and cc_mqtt_parse_auth. The
 * first byte picks the parser (0: URL, 1: device id, 2: auth file text); the rest is the input.
 * A parsed URL must give a host that fits and a port in 1..65535. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mqtt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int pick = data[0] % 3;
    data++;
    size--;
    char *s = malloc(size + 1); // a NUL-terminated copy, as from argv or the config
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct cc_error err = {0};
    if (pick == 0) {
        struct cc_mqtt_address a;
        if (cc_mqtt_parse_url(s, &a, &err) &&
            (a.port < 1 || a.port > 65535 || !a.host[0] || strlen(a.host) >= sizeof(a.host)))
            abort();
    } else if (pick == 1) {
        char id[65];
        if (cc_mqtt_device_id(s, id, &err) && (strlen(id) < 1 || strlen(id) > 64))
            abort();
    } else {
        char user[256], pass[1024];
        if (cc_mqtt_parse_auth((const char *)data, size, "fuzz", user, pass, &err) &&
            (!user[0] || strlen(user) > 255 || strlen(pass) > 1023))
            abort();
    }
    free(s);
    return 0;
}
