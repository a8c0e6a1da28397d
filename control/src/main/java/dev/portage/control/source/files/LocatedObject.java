package dev.portage.control.source.files;

import dev.portage.control.store.SourceObject;

/** An object read from a manifest, with where it was defined ({@code file.yaml:12}) for messages. */
record LocatedObject(SourceObject object, String location) {}
