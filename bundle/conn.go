package bundle

// ModelConnPrefix begins the names of the connections a verify run's model
// proxy records ("model-h1", ...): the calls the provider CLI made to the
// model, beside the server's own connections in the same bundle. The model
// they went to is the manifest's "modelUpstream" option when the run had
// one, else the scripted model (or a model cassette) on loopback.
const ModelConnPrefix = "model-"
