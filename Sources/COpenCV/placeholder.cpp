#include "COpenCV.h"
