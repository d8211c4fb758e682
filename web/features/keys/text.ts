/**
 * The key-image page's interface text (spec §2.14: in Georgian). English glosses in comments.
 */
export const KeyImageText = {
  /** Key image */
  title: "გასაღების სურათი",
  /** Your private key as a Shadow Cipher picture. Keep it somewhere safe: it is the way to export the key. */
  intro:
    "თქვენი პირადი გასაღები Shadow Cipher სურათის სახით. შეინახეთ უსაფრთხო ადგილას — ასე გადაიტანთ გასაღებს სხვა მოწყობილობაზე.",
  /** Generate */
  generateTab: "გენერირება",
  /** Read */
  readTab: "წაკითხვა",
  /** Make the picture */
  generate: "სურათის შექმნა",
  /** Download PNG */
  download: "PNG-ის ჩამოტვირთვა",
  /** The key picture was downloaded */
  downloaded: "გასაღების სურათი ჩამოიტვირთა (dna-key.png)",
  /** This browser holds no private key */
  noKey: "ამ ბრაუზერში პირადი გასაღები არ არის",
  /**
   * This browser holds your private key, but keeps it so that it cannot be read back, not even by this
   * page: the picture cannot be made from it. (Issue 28: never "no private key" when it holds one.)
   */
  heldNotExportable:
    "ეს ბრაუზერი ინახავს თქვენს პირად გასაღებს, მაგრამ ისე, რომ მისი წაკითხვა შეუძლებელია, ამ გვერდისთვისაც კი: სურათს მისგან ვერ შევქმნით.",
  /**
   * The picture can be made from your key backup, or on a device where the key can be read. With
   * neither, the key works only in this browser: keep the key file you saved, if you have one.
   */
  heldHint:
    "სურათის შექმნა შესაძლებელია გასაღების სარეზერვო ასლიდან ან იმ მოწყობილობაზე, სადაც გასაღების წაკითხვა შესაძლებელია. თუ არც ერთი არ გაქვთ, გასაღები მხოლოდ ამ ბრაუზერში იმუშავებს: შეინახეთ გასაღების ფაილი, თუ ის გაქვთ.",
  /** The picture could not be made */
  generateFailed: "სურათის შექმნა ვერ მოხერხდა",
  /** Choose a key picture */
  pick: "აირჩიეთ გასაღების სურათი",
  /** The picture holds this account's key */
  match: "სურათი შეიცავს ამ ანგარიშის გასაღებს ✓",
  /** The picture holds a different key: not this account's */
  mismatch: "სურათი შეიცავს სხვა გასაღებს — ის ამ ანგარიშს არ ეკუთვნის",
  /** Spec §5: the key code could not be read (same text as the validation modal) */
  readFailed: "გასაღების კოდის წაკითხვა ვერ მოხერხდა",
  /** Back to the board */
  back: "← დაფაზე დაბრუნება",
  /** Checking... */
  checking: "მოწმდება...",
  /** This browser cannot read its stored private key back. To make the picture, enter your key backup's passphrase or recovery code. */
  needBackupSecret:
    "ეს ბრაუზერი შენახულ პირად გასაღებს ვერ კითხულობს. სურათის შესაქმნელად შეიყვანეთ გასაღების სარეზერვო ასლის საიდუმლო ფრაზა ან აღდგენის კოდი.",
  /** Passphrase or recovery code */
  backupSecret: "საიდუმლო ფრაზა ან აღდგენის კოდი",
  /** Open the backup */
  openBackup: "სარეზერვო ასლის გახსნა",
  /** Opening... */
  opening: "იხსნება...",
  /** Wrong passphrase or recovery code */
  wrongSecret: "არასწორი საიდუმლო ფრაზა ან აღდგენის კოდი",
  /** There is no key backup on the server either: use the key file or picture you saved */
  noBackup: "სერვერზე გასაღების სარეზერვო ასლიც არ არის — გამოიყენეთ შენახული გასაღების ფაილი ან სურათი",
  /** Too many wrong attempts: try again in N seconds */
  tooManyAttempts: (seconds: number) => `ძალიან ბევრი არასწორი მცდელობა: სცადეთ ${seconds} წამში`,
  /** The backup could not be opened */
  backupFailed: "სარეზერვო ასლის გახსნა ვერ მოხერხდა",
} as const;

/** Spec §2.14: the download is a PNG named dna-key. */
export const KEY_IMAGE_FILE = "dna-key.png";
