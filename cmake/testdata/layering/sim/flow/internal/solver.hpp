// Fixture: an internal header of sim/flow (fine where it is).
#pragma once
