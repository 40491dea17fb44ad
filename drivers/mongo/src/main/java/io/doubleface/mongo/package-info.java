/**
 * The MongoDB driver of doubleface: {@link io.doubleface.mongo.MongoDriver} (reactive streams on
 * the caller's event loops, or JDK asynchronous channels; the sync driver for the thread models),
 * its {@code mongodb://} provider, and {@link io.doubleface.mongo.MongoLeafServer}, embedded
 * {@code mongo-java-server} shards. See {@code docs/mongo.md}.
 */
package io.doubleface.mongo;
