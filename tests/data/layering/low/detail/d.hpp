// Internal to low/.
