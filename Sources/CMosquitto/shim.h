// libmosquitto (EPL-2.0 / EDL-1.0, Debian's libmosquitto-dev): the MQTT client of the collector's --mqtt output.
#pragma once
#include <mosquitto.h>
